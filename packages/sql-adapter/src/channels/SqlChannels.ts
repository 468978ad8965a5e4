import { Effect, Layer, Redacted, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Channel, ChannelError, ChannelRestriction } from "@leadline/core/channels/Channel"
import { ChannelsRepo, numberTakenMessage } from "@leadline/core/channels/ChannelsRepo"
import { Conflict } from "@leadline/core/Errors"
import { orDie, Timestamp } from "../internal/store.ts"
import * as SealedSecrets from "../sealing/SealedSecrets.ts"

// Schema-described rows: channels are few and not on a hot path.
const ChannelRow = Schema.Struct({
  ...Channel.fields,
  // Read as text: the two drivers differ in whether they parse jsonb.
  last_error: Schema.NullOr(Schema.fromJsonString(ChannelError)),
  restrictions: Schema.fromJsonString(Schema.Array(ChannelRestriction)),
  created_at: Timestamp,
  updated_at: Timestamp
})
const ConnectionRow = Schema.Struct({
  ...ChannelRow.fields,
  account_id: Schema.String,
  access_token: Schema.String,
  access_token_key: Schema.NullOr(Schema.String)
})

// The access token is sealed under the keyring's current key when there is one (sealing/SealedSecrets.ts).
const TOKEN = SealedSecrets.COLUMNS[0]!

const decodeChannels = Schema.decodeUnknownEffect(Schema.Array(ChannelRow))
const decodeConnections = Schema.decodeUnknownEffect(Schema.Array(ConnectionRow))
const decodeOwned = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ ...ChannelRow.fields, account_id: Schema.String }))
)

const COLUMNS = `id, type, name, phone_number_id, display_phone_number, business_account_id, status,
  last_error::text AS last_error, quality_rating, messaging_limit_tier, restrictions::text AS restrictions,
  created_at, updated_at`

export const layer = Layer.effect(
  ChannelsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const keyring = yield* SealedSecrets.SecretKeyring
    const sealed = (accountId: string, id: string, token: string) =>
      SealedSecrets.store(keyring, TOKEN, accountId, id, token)

    // A value that does not open is a defect (the start-up check makes it one): its message holds no secret.
    const toConnection = ({ account_id, access_token, access_token_key, ...channel }: typeof ConnectionRow.Type) => ({
      accountId: account_id,
      channel,
      accessToken: Redacted.make(
        SealedSecrets.open(keyring, TOKEN, {
          accountId: account_id,
          id: channel.id,
          value: access_token,
          keyId: access_token_key
        })
      )
    })

    return ChannelsRepo.of({
      insert: (accountId, channel, accessToken) => {
        const token = sealed(accountId, channel.id, accessToken)
        // ON CONFLICT rather than a caught violation, which would poison the transaction.
        return orDie(sql<{ id: string }>`
          INSERT INTO channels (account_id, id, type, name, phone_number_id, display_phone_number, business_account_id,
                                access_token, access_token_key, status, last_error, created_at, updated_at)
          VALUES (${accountId}::uuid, ${channel.id}, ${channel.type}, ${channel.name}, ${channel.phone_number_id},
                  ${channel.display_phone_number}, ${channel.business_account_id}, ${token.value}, ${token.keyId},
                  ${channel.status}, NULL, ${channel.created_at}::timestamptz, ${channel.updated_at}::timestamptz)
          ON CONFLICT (phone_number_id) DO NOTHING
          RETURNING id`).pipe(
          Effect.flatMap((rows) =>
            rows.length === 1 ? Effect.void : Effect.fail(new Conflict({ message: numberTakenMessage }))
          )
        )
      },
      list: (accountId, page) =>
        orDie(
          Effect.all([
            sql`SELECT ${columns} FROM channels WHERE account_id = ${accountId}::uuid
                ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`.pipe(
              Effect.flatMap(decodeChannels)
            ),
            sql<{ total: number }>`SELECT count(*)::int AS total FROM channels WHERE account_id = ${accountId}::uuid`
          ])
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows, total: count?.total ?? 0 }))),
      find: (accountId, id) =>
        orDie(
          sql`SELECT ${columns} FROM channels WHERE account_id = ${accountId}::uuid AND id = ${id}`.pipe(
            Effect.flatMap(decodeChannels)
          )
        ).pipe(Effect.map(([row]) => row)),
      update: (accountId, channel, accessToken) => {
        const token = accessToken === undefined ? undefined : sealed(accountId, channel.id, accessToken)
        const lastError = channel.last_error === null ? null : JSON.stringify(channel.last_error)
        const setToken =
          token === undefined ? sql`` : sql`, access_token = ${token.value}, access_token_key = ${token.keyId}`
        return orDie(
          sql`UPDATE channels SET name = ${channel.name}, status = ${channel.status}, last_error = ${lastError}::jsonb,
                updated_at = ${channel.updated_at}::timestamptz ${setToken}
              WHERE account_id = ${accountId}::uuid AND id = ${channel.id}
              RETURNING ${columns}`.pipe(Effect.flatMap(decodeChannels))
        ).pipe(Effect.map(([row]) => row))
      },
      setLastError: (accountId, id, error) =>
        orDie(sql`UPDATE channels SET last_error = ${error === null ? null : JSON.stringify(error)}::jsonb
                  WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(Effect.asVoid),
      connection: (phoneNumberId) =>
        orDie(
          sql`SELECT ${columns}, account_id::text AS account_id, access_token, access_token_key FROM channels
              WHERE phone_number_id = ${phoneNumberId}`.pipe(Effect.flatMap(decodeConnections))
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : toConnection(row)))),
      byBusinessAccount: (businessAccountId) =>
        orDie(
          sql`SELECT ${columns}, account_id::text AS account_id FROM channels
              WHERE business_account_id = ${businessAccountId} ORDER BY created_at, id`.pipe(
            Effect.flatMap(decodeOwned)
          )
        ).pipe(Effect.map((rows) => rows.map(({ account_id, ...channel }) => ({ accountId: account_id, channel })))),
      setHealth: (accountId, id, health, now) =>
        orDie(
          sql`UPDATE channels SET quality_rating = ${health.quality_rating},
                messaging_limit_tier = ${health.messaging_limit_tier},
                restrictions = ${JSON.stringify(health.restrictions)}::jsonb, updated_at = ${now}::timestamptz
              WHERE account_id = ${accountId}::uuid AND id = ${id}
              RETURNING ${columns}`.pipe(Effect.flatMap(decodeChannels))
        ).pipe(Effect.map(([row]) => row)),
      active: (accountId) =>
        orDie(
          sql`SELECT ${columns} FROM channels WHERE account_id = ${accountId}::uuid AND status = 'active'
              ORDER BY created_at, id`.pipe(Effect.flatMap(decodeChannels))
        ),
      withBusinessAccount: () =>
        orDie(
          sql`SELECT ${columns}, account_id::text AS account_id, access_token, access_token_key FROM channels
              WHERE status = 'active' AND business_account_id IS NOT NULL
              ORDER BY id`.pipe(Effect.flatMap(decodeConnections))
        ).pipe(Effect.map((rows) => rows.map(toConnection)))
    })
  })
)
