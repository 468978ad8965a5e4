import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Media, Message, MessageError } from "@leadline/core/messages/Message"
import { MessagesRepo } from "@leadline/core/messages/MessagesRepo"
import { orDie, Timestamp } from "../internal/store.ts"

// jsonb read as text (the drivers differ in parsing it); the inbound payload is kept as the text WhatsApp's JSON parsed to.
const JsonText = <S extends Schema.Top & { readonly DecodingServices: never; readonly EncodingServices: never }>(
  schema: S
) => Schema.NullOr(Schema.fromJsonString(schema))
const Time = Schema.NullOr(Timestamp)

const Row = Schema.Struct({
  ...Message.fields,
  template: JsonText(Schema.Record(Schema.String, Schema.Unknown)),
  media: JsonText(Media),
  error: JsonText(MessageError),
  provider_payload: JsonText(Schema.Unknown),
  scheduled_at: Time,
  provider_timestamp: Time,
  created_at: Timestamp,
  updated_at: Timestamp,
  sent_at: Time,
  delivered_at: Time,
  read_at: Time,
  failed_at: Time
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))

const COLUMNS = `id, conversation_id, lead_id, channel_id, direction, type, text, template::text AS template,
  media::text AS media, status, error::text AS error, external_id, sender_type, sender_id, campaign_id, scheduled_at,
  provider_timestamp, provider_payload, created_at, updated_at, sent_at, delivered_at, read_at, failed_at`

const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value))

export const layer = Layer.effect(
  MessagesRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const read = (statement: Effect.Effect<ReadonlyArray<unknown>, any>) =>
      orDie(Effect.flatMap(statement, decodeRows)) as Effect.Effect<ReadonlyArray<Message>>

    return MessagesRepo.of({
      list: (accountId, conversationId, page) =>
        Effect.all([
          read(sql`SELECT ${columns} FROM messages
                   WHERE account_id = ${accountId}::uuid AND conversation_id = ${conversationId}
                   ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`),
          orDie(sql<{ total: number }>`SELECT count(*)::int AS total FROM messages
                                       WHERE account_id = ${accountId}::uuid AND conversation_id = ${conversationId}`)
        ]).pipe(Effect.map(([items, [count]]) => ({ items, total: count?.total ?? 0 }))),
      find: (accountId, id) =>
        read(sql`SELECT ${columns} FROM messages WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([row]) => row)
        ),
      insertInbound: (accountId, m) =>
        // ON CONFLICT on the wamid: a redelivery is found by the index, and the transaction goes on.
        orDie(sql<{ id: string }>`
          INSERT INTO messages (account_id, id, conversation_id, lead_id, channel_id, direction, type, text, template,
            media, status, error, external_id, sender_type, sender_id, campaign_id, scheduled_at, provider_timestamp,
            provider_payload, created_at, updated_at)
          VALUES (${accountId}::uuid, ${m.id}, ${m.conversation_id}, ${m.lead_id}, ${m.channel_id}, ${m.direction},
            ${m.type}, ${m.text}, ${jsonOrNull(m.template)}::jsonb, ${jsonOrNull(m.media)}::jsonb, ${m.status},
            ${jsonOrNull(m.error)}::jsonb, ${m.external_id}, ${m.sender_type}, ${m.sender_id}, ${m.campaign_id},
            ${m.scheduled_at}::timestamptz, ${m.provider_timestamp}::timestamptz, ${jsonOrNull(m.provider_payload)},
            ${m.created_at}::timestamptz, ${m.updated_at}::timestamptz)
          ON CONFLICT (account_id, channel_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
          RETURNING id`).pipe(Effect.map((rows) => rows.length === 1))
    })
  })
)
