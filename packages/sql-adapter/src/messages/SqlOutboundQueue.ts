import { Effect, Layer, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type ClaimedMessage, OutboundQueue } from "@leadline/core/messages/OutboundQueue"
import { orDie, textArray } from "../internal/store.ts"
import { MESSAGES_CHANNEL, Notifications } from "../Notifications.ts"
import type * as Keyring from "../sealing/Keyring.ts"
import * as SealedSecrets from "../sealing/SealedSecrets.ts"
import { columnsOf, toMessage } from "./SqlMessages.ts"

const at = (millis: number) => new Date(millis).toISOString()

export const layer = Layer.effect(
  OutboundQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* Notifications
    const columns = sql.unsafe(columnsOf("m"))
    const keyring = yield* SealedSecrets.SecretKeyring

    return OutboundQueue.of({
      // One statement: due messages in lane order, skipping those another sender holds, leased.
      // Every key is probed by its index (= ANY, LATERAL … LIMIT 1), whatever the statistics say:
      // right after a campaign adds 100,000 messages and threads they are stale, and a hash join
      // over every conversation made each claim 200-500 ms (docs/performance.md).
      // A message whose lease ran out while `sending_since` was set comes back `interrupted`:
      // a send of it began and never ended, so its outcome is unknown.
      claim: (worker, now, leaseMillis, limit) =>
        orDie(
          Effect.gen(function* () {
            const rows = yield* sql<Record<string, unknown>>`
              WITH due AS (
                SELECT account_id, id, sending_since IS NOT NULL AS interrupted FROM messages
                WHERE status = 'queued' AND not_before <= ${at(now)}::timestamptz
                  AND (lease_until IS NULL OR lease_until <= ${at(now)}::timestamptz)
                ORDER BY priority, not_before, id
                LIMIT ${limit}::int
                FOR UPDATE SKIP LOCKED
              ), claimed AS (
                UPDATE messages m SET lease_until = ${at(now + leaseMillis)}::timestamptz, lease_owner = ${worker}
                FROM due
                WHERE m.account_id = ANY(ARRAY(SELECT account_id FROM due)) AND m.id = ANY(ARRAY(SELECT id FROM due))
                  AND m.account_id = due.account_id AND m.id = due.id
                RETURNING m.*, due.interrupted
              )
              SELECT ${columns}, m.account_id::text AS claim_account, m.attempts + 1 AS claim_attempts,
                     m.interrupted AS claim_interrupted, c.phone_number_id AS claim_number,
                     c.access_token AS claim_token, c.access_token_key AS claim_token_key, c.status AS claim_channel_status,
                     coalesce(cv.contact_wa_id, substr(l.phone, 2)) AS claim_to
              FROM claimed m
              CROSS JOIN LATERAL (SELECT phone_number_id, access_token, access_token_key, status FROM channels
                                  WHERE account_id = m.account_id AND id = m.channel_id LIMIT 1) AS c
              CROSS JOIN LATERAL (SELECT contact_wa_id FROM conversations
                                  WHERE account_id = m.account_id AND id = m.conversation_id LIMIT 1) AS cv
              CROSS JOIN LATERAL (SELECT phone FROM leads WHERE account_id = m.account_id AND id = m.lead_id LIMIT 1) AS l
              ORDER BY m.priority, m.not_before, m.id`
            // A claim's messages share few channels: each sealed token is opened once per claim,
            // keyed by its row too (a value moved to another channel must be refused there).
            const opened = new Map<string, Redacted.Redacted<string> | Keyring.SealedValueError>()
            const tokenOf = (row: Record<string, unknown>) => {
              const key = `${row.claim_account}/${row.channel_id}/${row.claim_token}`
              let token = opened.get(key)
              if (token === undefined) {
                try {
                  token = Redacted.make(
                    SealedSecrets.open(keyring, SealedSecrets.COLUMNS[0]!, {
                      accountId: row.claim_account as string,
                      id: row.channel_id as string,
                      value: row.claim_token as string,
                      keyId: row.claim_token_key as string | null
                    })
                  )
                } catch (error) {
                  token = error as Keyring.SealedValueError
                }
                opened.set(key, token)
              }
              return token
            }
            const claimed: Array<ClaimedMessage> = []
            for (const row of rows) {
              const accessToken = tokenOf(row)
              if (accessToken instanceof Error) continue
              claimed.push({
                accountId: row.claim_account as string,
                message: toMessage(row),
                channel: {
                  phoneNumberId: row.claim_number as string,
                  accessToken,
                  active: row.claim_channel_status === "active"
                },
                to: row.claim_to as string,
                attempts: row.claim_attempts as number,
                interrupted: row.claim_interrupted as boolean
              })
            }
            // A token that does not open holds its channel's messages (leased, so the others go on)
            // until a new token is given; the message names the row, never the value.
            for (const failure of opened.values()) {
              if (failure instanceof Error) {
                yield* Effect.logError(`Messages held: ${failure.message}; give the channel a new access_token`)
              }
            }
            return claimed
          })
        ),
      beginSend: (worker, keys, now) =>
        orDie(sql<{ id: string }>`
          UPDATE messages m SET sending_since = ${at(now)}::timestamptz, attempts = m.attempts + 1
          FROM jsonb_to_recordset(${JSON.stringify(keys.map(({ accountId, id }) => ({ account_id: accountId, id })))}::jsonb)
            AS k(account_id uuid, id text)
          WHERE m.account_id = ANY(${textArray([...new Set(keys.map((key) => key.accountId))])}::uuid[])
            AND m.id = ANY(${textArray(keys.map((key) => key.id))}::text[])
            AND m.account_id = k.account_id AND m.id = k.id AND m.lease_owner = ${worker} AND m.status = 'queued'
            AND m.sending_since IS NULL
          RETURNING m.id`).pipe(Effect.map((rows) => new Set(rows.map((row) => row.id)))),
      channelRefused: (accountId, channelId, error) =>
        orDie(sql`UPDATE channels SET last_error = ${JSON.stringify(error)}::jsonb
                  WHERE account_id = ${accountId}::uuid AND id = ${channelId}`).pipe(Effect.asVoid),
      retryLater: (accountId, id, notBefore) =>
        orDie(sql`
          UPDATE messages SET not_before = ${at(notBefore)}::timestamptz, lease_until = NULL, lease_owner = NULL,
            sending_since = NULL
          WHERE account_id = ${accountId}::uuid AND id = ${id} AND status = 'queued'`).pipe(Effect.asVoid),
      holdCampaigns: (accountId, channelId, until, now) =>
        orDie(sql`
          UPDATE messages SET not_before = ${
            until === null
              ? sql`greatest(coalesce(scheduled_at, ${at(now)}::timestamptz), ${at(now)}::timestamptz)`
              : until === Number.POSITIVE_INFINITY
                ? sql`'infinity'::timestamptz`
                : sql`${at(until)}::timestamptz`
          }
          WHERE account_id = ${accountId}::uuid AND channel_id = ${channelId} AND status = 'queued'
            AND campaign_id IS NOT NULL AND sending_since IS NULL
            ${until === null ? sql`AND not_before > ${at(now)}::timestamptz` : sql``}`).pipe(Effect.asVoid),
      // The partial index of queued messages answers it (messages_queued).
      backlog: (now) =>
        orDie(sql<{ due: number; oldest: unknown }>`
          SELECT count(*)::int AS due, min(not_before) AS oldest FROM messages
          WHERE status = 'queued' AND not_before <= ${at(now)}::timestamptz`).pipe(
          Effect.map(([row]) => ({
            due: row?.due ?? 0,
            oldestDueAt:
              row?.oldest === null || row?.oldest === undefined ? undefined : new Date(row.oldest as string).getTime()
          }))
        ),
      wakeups: notifications.listen(MESSAGES_CHANNEL)
    })
  })
)
