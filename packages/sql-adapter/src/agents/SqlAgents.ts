import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Agent } from "@leadline/core/agents/Agent"
import { AgentsRepo } from "@leadline/core/agents/AgentsRepo"
import { iso, json, orDie } from "../internal/store.ts"

interface AgentRow {
  readonly id: string
  readonly name: string
  readonly enabled: boolean
  readonly channels: ReadonlyArray<Agent["channels"][number]>
  readonly config: unknown
  readonly version: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
}

/** What `config` holds: every field of the agent but those with columns of their own. */
type Config = Omit<Agent, "id" | "name" | "enabled" | "channels" | "version" | "created_at" | "updated_at">

const configOf = (agent: Agent): Config => {
  const {
    id: _id,
    name: _name,
    enabled: _enabled,
    channels: _channels,
    version: _v,
    created_at: _c,
    updated_at: _u,
    ...config
  } = agent
  return config
}

const toAgent = (row: AgentRow): Agent => {
  const config = json<Config>(row.config)
  return {
    id: row.id,
    name: row.name,
    description: config.description,
    enabled: row.enabled,
    channels: row.channels,
    instructions: config.instructions,
    model: config.model,
    temperature: config.temperature,
    max_output_tokens: config.max_output_tokens,
    knowledge_source_ids: config.knowledge_source_ids,
    max_snippets: config.max_snippets,
    handoff: config.handoff,
    fallback_message: config.fallback_message,
    version: Number(row.version),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at)
  }
}

const COLUMNS = "id, name, enabled, channels, config, version, created_at, updated_at"

/** A PostgreSQL text[] literal of channel names (fixed words: no quoting needed beyond the braces). */
const channelArray = (channels: ReadonlyArray<string>) => `{${channels.join(",")}}`

export const layer = Layer.effect(
  AgentsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const many = (statement: Effect.Effect<ReadonlyArray<AgentRow>, any>) =>
      orDie(statement).pipe(Effect.map((rows) => rows.map(toAgent)))

    return AgentsRepo.of({
      // A transaction-scoped advisory lock keyed by the account: agents' cross-checks need no row to lock.
      lockAccount: (accountId) =>
        orDie(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`agents:${accountId}`}, 0))`).pipe(Effect.asVoid),
      all: (accountId) =>
        many(sql<AgentRow>`SELECT ${columns} FROM agents WHERE account_id = ${accountId}::uuid ORDER BY id`),
      list: (accountId, page) =>
        orDie(
          Effect.all(
            [
              sql<AgentRow>`SELECT ${columns} FROM agents WHERE account_id = ${accountId}::uuid
                            ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM agents WHERE account_id = ${accountId}::uuid`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toAgent), total: count?.total ?? 0 }))),
      find: (accountId, id) =>
        many(sql<AgentRow>`SELECT ${columns} FROM agents WHERE account_id = ${accountId}::uuid AND id = ${id}`).pipe(
          Effect.map(([agent]) => agent)
        ),
      insert: (accountId, a) =>
        orDie(sql`
          INSERT INTO agents (account_id, ${columns})
          VALUES (${accountId}::uuid, ${a.id}, ${a.name}, ${a.enabled}, ${channelArray(a.channels)}::text[],
                  ${JSON.stringify(configOf(a))}::jsonb, ${a.version}::int, ${a.created_at}::timestamptz,
                  ${a.updated_at}::timestamptz)`).pipe(Effect.asVoid),
      update: (accountId, a) =>
        orDie(sql`
          UPDATE agents SET name = ${a.name}, enabled = ${a.enabled}, channels = ${channelArray(a.channels)}::text[],
            config = ${JSON.stringify(configOf(a))}::jsonb, version = ${a.version}::int,
            updated_at = ${a.updated_at}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${a.id}`).pipe(Effect.asVoid),
      remove: (accountId, id) =>
        many(
          sql<AgentRow>`DELETE FROM agents WHERE account_id = ${accountId}::uuid AND id = ${id} RETURNING ${columns}`
        ).pipe(Effect.map(([agent]) => agent)),
      enabledOn: (accountId, channel) =>
        many(
          sql<AgentRow>`SELECT ${columns} FROM agents
                        WHERE account_id = ${accountId}::uuid AND enabled AND ${channel} = ANY(channels)
                        ORDER BY id LIMIT 1`
        ).pipe(Effect.map(([agent]) => agent))
    })
  })
)
