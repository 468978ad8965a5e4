import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { OptOutSettingsRepo } from "@leadline/core/optouts/OptOutSettings"
import { json, orDie } from "../internal/store.ts"

interface Row {
  readonly opt_out_keywords: unknown
  readonly opt_in_keywords: unknown
  readonly opt_out_reply: string | null
  readonly opt_in_reply: string | null
}

export const layer = Layer.effect(
  OptOutSettingsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return OptOutSettingsRepo.of({
      find: (accountId) =>
        orDie(
          sql<Row>`SELECT opt_out_keywords, opt_in_keywords, opt_out_reply, opt_in_reply FROM opt_out_settings
                   WHERE account_id = ${accountId}::uuid`
        ).pipe(
          Effect.map(([row]) =>
            row === undefined
              ? undefined
              : {
                  opt_out_keywords: json<ReadonlyArray<string>>(row.opt_out_keywords),
                  opt_in_keywords: json<ReadonlyArray<string>>(row.opt_in_keywords),
                  opt_out_reply: row.opt_out_reply,
                  opt_in_reply: row.opt_in_reply
                }
          )
        ),
      save: (accountId, settings) =>
        orDie(
          sql`INSERT INTO opt_out_settings (account_id, opt_out_keywords, opt_in_keywords, opt_out_reply, opt_in_reply, updated_at)
              VALUES (${accountId}::uuid, ${JSON.stringify(settings.opt_out_keywords)}::jsonb,
                      ${JSON.stringify(settings.opt_in_keywords)}::jsonb, ${settings.opt_out_reply},
                      ${settings.opt_in_reply}, now())
              ON CONFLICT (account_id) DO UPDATE SET opt_out_keywords = EXCLUDED.opt_out_keywords,
                opt_in_keywords = EXCLUDED.opt_in_keywords, opt_out_reply = EXCLUDED.opt_out_reply,
                opt_in_reply = EXCLUDED.opt_in_reply, updated_at = EXCLUDED.updated_at`
        ).pipe(Effect.asVoid)
    })
  })
)
