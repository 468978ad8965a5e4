import { Effect, Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { InboundMedia } from "@leadline/core/messages/Message"
import { MediaQueue } from "@leadline/core/whatsapp/MediaQueue"
import { json, orDie } from "../internal/store.ts"
import { MEDIA_CHANNEL, Notifications } from "../Notifications.ts"
import * as SealedSecrets from "../sealing/SealedSecrets.ts"
import { afterCommitIfWrote } from "../UnitOfWork.ts"

const at = (millis: number) => new Date(millis).toISOString()

/** The fetch queue of inbound files (migration 0031). */
export const layer = Layer.effect(
  MediaQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const mediaQueued = notifications.announce(MEDIA_CHANNEL)
    const keyring = yield* SealedSecrets.SecretKeyring

    return MediaQueue.of({
      // In the inbound unit of work: the fetchers are woken once it commits (Notifications.ts).
      enqueue: (accountId, messages, now) =>
        messages.length === 0
          ? Effect.void
          : orDie(sql`
          WITH queued AS (
            INSERT INTO media_downloads (account_id, message_id, not_before)
            SELECT ${accountId}::uuid, k.id, ${at(now)}::timestamptz
            FROM jsonb_array_elements_text(${JSON.stringify(messages.map((message) => message.id))}::jsonb) AS k(id)
            ON CONFLICT DO NOTHING
            RETURNING 1
          )
          SELECT EXISTS (SELECT 1 FROM queued) AS wrote`).pipe(Effect.flatMap(afterCommitIfWrote(mediaQueued))),
      // Due files, skipping those another fetcher holds; each claim counts as an attempt.
      claim: (worker, now, leaseMillis, limit) =>
        orDie(sql<Record<string, unknown>>`
          WITH due AS (
            SELECT account_id, message_id FROM media_downloads
            WHERE not_before <= ${at(now)}::timestamptz
              AND (lease_until IS NULL OR lease_until <= ${at(now)}::timestamptz)
            ORDER BY not_before, message_id
            LIMIT ${limit}::int
            FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE media_downloads d SET lease_until = ${at(now + leaseMillis)}::timestamptz,
              lease_owner = ${worker}, attempts = d.attempts + 1
            FROM due WHERE d.account_id = due.account_id AND d.message_id = due.message_id
            RETURNING d.account_id, d.message_id, d.attempts
          )
          SELECT c.account_id::text AS account_id, c.message_id, c.attempts, m.type, m.media::text AS media,
                 ch.id AS channel_id, ch.phone_number_id, ch.access_token, ch.access_token_key
          FROM claimed c
          JOIN messages m ON m.account_id = c.account_id AND m.id = c.message_id
          JOIN channels ch ON ch.account_id = m.account_id AND ch.id = m.channel_id`).pipe(
          Effect.flatMap((rows) =>
            Effect.gen(function* () {
              const claimed = []
              for (const row of rows) {
                // A sealed token is opened here, as the sender's claim does (sealing/SealedSecrets.ts); one
                // that does not open keeps its file leased, to be tried again once the channel has a new token.
                let token: string
                try {
                  token = SealedSecrets.open(keyring, SealedSecrets.COLUMNS[0]!, {
                    accountId: row.account_id as string,
                    id: row.channel_id as string,
                    value: row.access_token as string,
                    keyId: row.access_token_key as string | null
                  })
                } catch (error) {
                  yield* Effect.logError(`Media held: ${(error as Error).message}; give the channel a new access_token`)
                  continue
                }
                claimed.push({
                  accountId: row.account_id as string,
                  messageId: row.message_id as string,
                  type: row.type as string,
                  media: json<InboundMedia>(row.media),
                  channel: { phoneNumberId: row.phone_number_id as string, accessToken: Redacted.make(token) },
                  attempts: row.attempts as number
                })
              }
              return claimed
            })
          )
        ),
      retryLater: (accountId, messageId, notBefore) =>
        orDie(sql`
          UPDATE media_downloads SET not_before = ${at(notBefore)}::timestamptz, lease_until = NULL, lease_owner = NULL
          WHERE account_id = ${accountId}::uuid AND message_id = ${messageId}`).pipe(Effect.asVoid),
      finish: (accountId, messageId, media, now) =>
        orDie(sql`
          WITH done AS (
            DELETE FROM media_downloads WHERE account_id = ${accountId}::uuid AND message_id = ${messageId}
          )
          UPDATE messages SET media = ${JSON.stringify(media)}::jsonb, updated_at = ${now}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${messageId}`).pipe(Effect.asVoid),
      wakeups: notifications.listen(MEDIA_CHANNEL)
    })
  })
)
