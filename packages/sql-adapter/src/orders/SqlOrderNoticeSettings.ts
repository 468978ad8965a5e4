import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { OrderNoticeSettingsRepo } from "@leadline/core/orders/OrderNotices"
import { orDie } from "../internal/store.ts"

interface Row {
  readonly enabled: boolean
  readonly template_name: string | null
  readonly template_language: string | null
}

export const layer = Layer.effect(
  OrderNoticeSettingsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return OrderNoticeSettingsRepo.of({
      find: (accountId) =>
        orDie(
          sql<Row>`SELECT enabled, template_name, template_language FROM order_notice_settings
                   WHERE account_id = ${accountId}::uuid`
        ).pipe(
          Effect.map(([row]) =>
            row === undefined
              ? undefined
              : {
                  enabled: row.enabled,
                  template:
                    row.template_name === null || row.template_language === null
                      ? null
                      : { name: row.template_name, language: row.template_language }
                }
          )
        ),
      save: (accountId, settings) =>
        orDie(
          sql`INSERT INTO order_notice_settings (account_id, enabled, template_name, template_language, updated_at)
              VALUES (${accountId}::uuid, ${settings.enabled}, ${settings.template?.name ?? null},
                      ${settings.template?.language ?? null}, now())
              ON CONFLICT (account_id) DO UPDATE SET enabled = EXCLUDED.enabled,
                template_name = EXCLUDED.template_name, template_language = EXCLUDED.template_language,
                updated_at = EXCLUDED.updated_at`
        ).pipe(Effect.asVoid)
    })
  })
)
