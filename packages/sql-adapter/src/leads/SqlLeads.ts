import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Conflict } from "@leadline/core/Errors"
import type { Lead, LeadStatus, MarketingOptOut } from "@leadline/core/leads/Lead"
import { LeadsRepo, phoneTakenMessage } from "@leadline/core/leads/LeadsRepo"
import type { Page } from "@leadline/core/Pagination"
import type { Audience } from "@leadline/core/leads/Audience"
import type { LeadFilter, LeadSearch } from "@leadline/core/leads/LeadSearch"
import * as Tallies from "../internal/tallies.ts"
import { backendStripe, COUNT_STRIPES, iso, json, orDie, textArray } from "../internal/store.ts"
import { mayPresume, note, noted, notes, presume, read } from "../UnitOfWork.ts"
import { TALLIED_SETTING } from "./migrations/0042_lead_tallies_per_statement.ts"

// Whether this unit already presumed a lead insert (one presumption a unit).
const presumedInsert = notes<true>("leads:presumed")

interface LeadRow {
  readonly id: string
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: unknown
  readonly status: LeadStatus
  readonly assigned_user_id: string | null
  readonly attributes: unknown
  readonly marketing_opt_out: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
}

// Rebuilt in the wire's field order: jsonb keeps its keys sorted by length.
const optOutOf = (value: unknown): MarketingOptOut | null => {
  if (value === null) return null
  const { at, source, reason } = json<MarketingOptOut>(value)
  return { at, source, reason }
}

// Hand-written: GET /api/v1/leads maps 50 rows per request, ~2.5x faster than a Schema decode (~90 µs against ~220 µs).
const toLead = (row: LeadRow): Lead => ({
  id: row.id,
  name: row.name,
  phone: row.phone,
  email: row.email,
  tags: json<ReadonlyArray<string>>(row.tags),
  status: row.status,
  assigned_user_id: row.assigned_user_id,
  attributes: json<Record<string, unknown>>(row.attributes),
  marketing_opt_out: optOutOf(row.marketing_opt_out),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

// The lead count's stripes (internal/store.ts), for the tests that read them.
export { COUNT_STRIPES }

const COLUMNS =
  "id, name, phone, email, tags, status, assigned_user_id, attributes, marketing_opt_out, created_at, updated_at"

/**
 * One newest-first page. It walks `leads_newest_first` from the top and stops
 * after `offset + limit` rows; the total is the sum of the account's `lead_counts`
 * stripes, so neither grows with the size of the account (exported so a test can EXPLAIN it).
 */
export const pageQuery = (sql: SqlClient.SqlClient, accountId: string, page: Page) =>
  sql<LeadRow>`SELECT ${sql.unsafe(COLUMNS)} FROM leads WHERE account_id = ${accountId}::uuid
               ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`

/**
 * `Audience.matches` in SQL (docs/contract-messaging.md §8.1): any of the tags and one of the statuses
 * (each when given), or one of the lead ids, and none of the excluded tags.
 */
const audienceWhere = (sql: SqlClient.SqlClient, accountId: string, audience: Audience) => {
  const filters = [
    ...(audience.tags.length > 0 ? [sql`tags ?| ${textArray(audience.tags)}::text[]`] : []),
    ...(audience.statuses.length > 0 ? [sql`status = ANY(${textArray(audience.statuses)}::text[])`] : [])
  ]
  const chosen = [
    ...(filters.length > 0 ? [sql.and(filters)] : []),
    ...(audience.lead_ids.length > 0 ? [sql`id = ANY(${textArray(audience.lead_ids)}::text[])`] : [])
  ]
  return sql.and([
    sql`account_id = ${accountId}::uuid`,
    chosen.length > 0 ? sql.or(chosen) : sql`false`,
    ...(audience.exclude_tags.length > 0 ? [sql`NOT (tags ?| ${textArray(audience.exclude_tags)}::text[])`] : [])
  ])
}

/**
 * The first string after every string that starts with `prefix` (its last character moved up by one),
 * or `undefined` when there is none. Under the C collation strings compare by code point, so "starts
 * with p" is exactly `p <= value < after(p)`: a range an index answers, in a custom plan and in the
 * generic one a prepared statement falls back to (LIKE's prefix needs the pattern at planning time).
 */
export const after = (prefix: string): string | undefined => {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!)
  while (points.length > 0) {
    const next = points.pop()! + 1
    // A surrogate is no character of its own: the one after U+D7FF is U+E000.
    if (next <= 0x10ffff) return String.fromCodePoint(...points, next === 0xd800 ? 0xe000 : next)
  }
  return undefined
}

const startsWith = (sql: SqlClient.SqlClient, column: string, prefix: string) => {
  const value = sql.unsafe(column)
  const upper = after(prefix)
  return upper === undefined ? sql`${value} >= ${prefix}` : sql`${value} >= ${prefix} AND ${value} < ${upper}`
}

/** What `q` matches, one term per index (migrations 0038 and 0046): names, emails, phones by prefix. */
const prefixTerms = (sql: SqlClient.SqlClient, filter: LeadFilter) =>
  filter.prefix === undefined
    ? []
    : [
        startsWith(sql, `lower(name) COLLATE "C"`, filter.prefix),
        sql`email IS NOT NULL AND ${startsWith(sql, `lower(email) COLLATE "C"`, filter.prefix)}`,
        ...(filter.phoneDigits === undefined ? [] : [startsWith(sql, `phone COLLATE "C"`, `+${filter.phoneDigits}`)])
      ]

/** `LeadSearch.matches` in SQL (docs/contract.md, "Finding leads"), on the indexes of migrations 0038 and 0046. */
const searchWhere = (sql: SqlClient.SqlClient, accountId: string, filter: LeadFilter) => {
  const terms = prefixTerms(sql, filter)
  return sql.and([
    sql`account_id = ${accountId}::uuid`,
    ...(terms.length === 0 ? [] : [sql.or(terms)]),
    ...(filter.statuses.length > 0 ? [sql`status = ANY(${textArray(filter.statuses)}::text[])`] : []),
    ...(filter.tags.length > 0 ? [sql`tags ?| ${textArray(filter.tags)}::text[]`] : []),
    ...(filter.assignedUserId === undefined
      ? []
      : filter.assignedUserId === null
        ? [sql`assigned_user_id IS NULL`]
        : [sql`assigned_user_id = ${filter.assignedUserId}::uuid`]),
    ...(filter.createdAfter === undefined ? [] : [sql`created_at >= ${filter.createdAfter}::timestamptz`]),
    ...(filter.createdBefore === undefined ? [] : [sql`created_at < ${filter.createdBefore}::timestamptz`]),
    ...(filter.updatedAfter === undefined ? [] : [sql`updated_at >= ${filter.updatedAfter}::timestamptz`])
  ])
}

/**
 * Up to this many leads matching `q`, a search reads every match and sorts them; past it, it walks the
 * list's own order and keeps the matches, as any other filter does. Walking finds a page among m matches
 * of n leads after about 51·n/m rows, reading them all costs m: at a million leads the two meet near
 * 2,000 (docs/performance.md, "A search that matches few leads").
 */
export const NARROW_SEARCH = 2_000

/**
 * How many leads `q` matches, counted up to one past `NARROW_SEARCH` per term in the terms' own indexes
 * (index-only: each names its column besides its key), so it costs about the same for a rare prefix and
 * a common one. A lead matching two terms counts twice: an overcount only makes the search walk.
 */
export const matchesQuery = (sql: SqlClient.SqlClient, accountId: string, filter: LeadFilter) =>
  sql<{ matches: number }>`SELECT ${sql.join(
    " + ",
    false
  )(
    prefixTerms(sql, filter).map(
      (term) => sql`(SELECT count(*) FROM (SELECT FROM leads WHERE account_id = ${accountId}::uuid AND ${term}
                      LIMIT ${NARROW_SEARCH + 1}::int) AS counted)`
    )
  )} AS matches`

// The sort key as SQL has it: names in lower case under the C collation, as `LeadSearch.sortValue`.
const SORT_KEY = { created_at: "created_at", updated_at: "updated_at", name: `lower(name) COLLATE "C"` } as const

/**
 * One page of a search: `limit + 1` rows in the order (reversed for a page before a lead, then put
 * back), the extra one saying whether there are more. A cursor compares (key, id) with the anchor's
 * own row, read in the statement, so both sides are in the database's precision and collation.
 */
export const searchQuery = (sql: SqlClient.SqlClient, accountId: string, search: LeadSearch, narrow = false) => {
  const key = sql.unsafe(SORT_KEY[search.order.key])
  const window = search.window
  // A page before the anchor walks the order backwards from it.
  const descending = window.by === "before" ? !search.order.descending : search.order.descending
  const direction = sql.unsafe(descending ? "DESC" : "ASC")
  const cursor =
    window.by === "offset"
      ? []
      : [
          sql`(${key}, id) ${sql.unsafe(descending ? "<" : ">")} (SELECT ${key}, id FROM leads
                WHERE account_id = ${accountId}::uuid AND id = ${window.anchor.id})`
        ]
  const where = sql.and([searchWhere(sql, accountId, search.filter), ...cursor])
  const page = sql`ORDER BY ${key} ${direction}, id ${direction}
    LIMIT ${search.limit + 1}::int OFFSET ${window.by === "offset" ? window.offset : 0}::int`
  // Narrow: the matches are read whole, out of the terms' indexes, and sorted; the fence keeps the
  // planner from walking the order instead, which it prefers when it guesses more matches than there are.
  return narrow
    ? sql<LeadRow>`WITH found AS MATERIALIZED (SELECT ${sql.unsafe(COLUMNS)} FROM leads WHERE ${where})
        SELECT ${sql.unsafe(COLUMNS)} FROM found ${page}`
    : sql<LeadRow>`SELECT ${sql.unsafe(COLUMNS)} FROM leads WHERE ${where} ${page}`
}

const optOutValue = (optOut: MarketingOptOut | null) => (optOut === null ? null : JSON.stringify(optOut))

export const layer = Layer.effect(
  LeadsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const phoneTaken = (phone: string) => new Conflict({ message: phoneTakenMessage(phone) })
    const leadValues = (accountId: string, lead: Lead) =>
      sql`(${accountId}::uuid, ${lead.id}, ${lead.name}, ${lead.phone}, ${lead.email},
           ${JSON.stringify(lead.tags)}::jsonb, ${lead.status}, ${lead.assigned_user_id}::uuid,
           ${JSON.stringify(lead.attributes)}::jsonb, ${optOutValue(lead.marketing_opt_out)}::jsonb,
           ${lead.created_at}::timestamptz, ${lead.updated_at}::timestamptz)`

    return LeadsRepo.of({
      createdPerBucket: (accountId, bounds) => Tallies.perBucket(sql, accountId, "leads_status:", bounds),
      statusesOfCreated: (accountId, window) =>
        Effect.map(Tallies.byPrefix(sql, accountId, "leads_status:", window), (counts) => Object.fromEntries(counts)),
      audience: (accountId, audience) =>
        orDie(
          sql<LeadRow>`SELECT ${columns} FROM leads WHERE ${audienceWhere(sql, accountId, audience)} ORDER BY id`
        ).pipe(Effect.map((rows) => rows.map(toLead))),
      audienceCount: (accountId, audience) =>
        orDie(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM leads WHERE ${audienceWhere(sql, accountId, audience)}`
        ).pipe(Effect.map(([row]) => row?.n ?? 0)),
      insert: (accountId, lead) =>
        // One presumed lead a unit: a second's count would update the same stripe in the same statement.
        Effect.flatMap(Effect.zip(mayPresume, noted(presumedInsert, "")), ([presuming, already]) =>
          presuming && already === undefined
            ? // The phone presumed free (UnitOfWork.ts): the row and its count go in with the
              // unit's end, where a phone already taken breaks the unique index and the unit runs
              // again, asking as below.
              Effect.andThen(
                note(presumedInsert, "", true),
                presume(
                  sql`INSERT INTO leads (account_id, ${columns}) VALUES ${leadValues(accountId, lead)}`,
                  sql`INSERT INTO lead_counts (account_id, stripe, total) VALUES (${accountId}::uuid, ${sql.unsafe(backendStripe)}, 1)
                    ON CONFLICT (account_id, stripe) DO UPDATE SET total = lead_counts.total + 1`
                )
              )
            : // One round trip: the count moves in the same statement, only when the row went in.
              // ON CONFLICT instead of catching the violation: a failed statement would
              // poison the surrounding transaction, and the idempotency record must still commit.
              orDie(sql<{ inserted: number }>`
                WITH inserted AS (
                  INSERT INTO leads (account_id, ${columns}) VALUES ${leadValues(accountId, lead)}
                  ON CONFLICT (account_id, phone) DO NOTHING
                  RETURNING account_id
                ), counted AS (
                  INSERT INTO lead_counts (account_id, stripe, total) SELECT account_id, ${sql.unsafe(backendStripe)}, 1 FROM inserted
                  ON CONFLICT (account_id, stripe) DO UPDATE SET total = lead_counts.total + 1
                )
                SELECT count(*)::int AS inserted FROM inserted`).pipe(
                Effect.flatMap(([row]) => (row?.inserted === 1 ? Effect.void : Effect.fail(phoneTaken(lead.phone))))
              )
        ),
      list: (accountId, page) =>
        orDie(
          Effect.all(
            [
              pageQuery(sql, accountId, page),
              sql<{ total: number }>`SELECT coalesce(sum(total), 0)::int AS total FROM lead_counts
                                   WHERE account_id = ${accountId}::uuid`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toLead), total: count?.total ?? 0 }))),
      total: (accountId) =>
        orDie(
          sql<{ total: number }>`SELECT coalesce(sum(total), 0)::int AS total FROM lead_counts
                                 WHERE account_id = ${accountId}::uuid`
        ).pipe(Effect.map(([row]) => row?.total ?? 0)),
      search: (accountId, search) =>
        orDie(
          Effect.flatMap(
            search.filter.prefix === undefined
              ? Effect.succeed(false)
              : Effect.map(
                  matchesQuery(sql, accountId, search.filter),
                  ([row]) => Number(row?.matches) <= NARROW_SEARCH
                ),
            (narrow) => searchQuery(sql, accountId, search, narrow)
          )
        ).pipe(
          Effect.map((rows) => {
            const hasMore = rows.length > search.limit
            const page = rows.slice(0, search.limit).map(toLead)
            return { items: search.window.by === "before" ? page.reverse() : page, hasMore }
          })
        ),
      find: (accountId, id) =>
        orDie(
          read(sql<LeadRow>`SELECT ${columns} FROM leads WHERE account_id = ${accountId}::uuid AND id = ${id}`)
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : toLead(row)))),
      findByIds: (accountId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : orDie(
              sql<LeadRow>`SELECT ${columns} FROM leads
                WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(ids)}::text[])`
            ).pipe(Effect.map((rows) => rows.map(toLead))),
      idsByPhone: (accountId, phones) =>
        orDie(sql<{ phone: string; id: string }>`
          SELECT l.phone, l.id FROM jsonb_array_elements_text(${JSON.stringify(phones)}::jsonb) AS p(phone)
          CROSS JOIN LATERAL (SELECT phone, id FROM leads WHERE account_id = ${accountId}::uuid AND phone = p.phone
                              LIMIT 1) AS l`).pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.phone, row.id])))
        ),
      findByPhones: (accountId, phones) =>
        phones.length === 0
          ? Effect.succeed([])
          : orDie(
              sql<LeadRow>`SELECT ${columns} FROM leads
                WHERE account_id = ${accountId}::uuid AND phone = ANY(${textArray(phones)}::text[])`
            ).pipe(Effect.map((rows) => rows.map(toLead))),
      // One statement a chunk: the rows go in from one JSON array, a phone already taken is skipped (its
      // row is refused by the caller), and the count moves by the rows that went in. The rows' analytics
      // tallies go in grouped, in the same statement (migration 0020's `leads` metric: one a lead, by its
      // status, in its creation's slot), the row trigger standing aside for it (migration 0042): per row it
      // cost an import's chunk two thirds of its insert. The setting is turned on as the rows are read, so
      // before any is inserted, and off again after, for the rest of a caller's transaction.
      insertMany: (accountId, many) =>
        many.length === 0
          ? Effect.succeed([])
          : orDie(
              Effect.zipWith(
                sql<{ id: string }>`
              WITH tallied_here AS MATERIALIZED (SELECT set_config(${TALLIED_SETTING}, 'on', true) AS flag),
              input AS (
                SELECT r.* FROM jsonb_to_recordset(${JSON.stringify(many)}::jsonb) AS r(id text, name text, phone text,
                  email text, tags jsonb, status text, assigned_user_id uuid, attributes jsonb, marketing_opt_out jsonb,
                  created_at timestamptz, updated_at timestamptz), tallied_here
              ), inserted AS (
                INSERT INTO leads (account_id, ${columns})
                SELECT ${accountId}::uuid, id, name, phone, email, tags, status, assigned_user_id, attributes,
                  nullif(marketing_opt_out, 'null'::jsonb), created_at, updated_at
                FROM input
                ON CONFLICT (account_id, phone) DO NOTHING
                RETURNING id, status, created_at
              ), counted AS (
                INSERT INTO lead_counts (account_id, stripe, total)
                SELECT ${accountId}::uuid, ${sql.unsafe(backendStripe)}, count(*) FROM inserted HAVING count(*) > 0
                ON CONFLICT (account_id, stripe) DO UPDATE SET total = lead_counts.total + EXCLUDED.total
              ), tallies AS (
                INSERT INTO analytics_tallies (account_id, metric, slot, stripe, value)
                SELECT ${accountId}::uuid, 'leads_status:' || status,
                  date_bin('15 minutes', created_at, timestamptz '1970-01-01 00:00:00+00'), (pg_backend_pid() % 64)::smallint,
                  count(*)
                FROM inserted GROUP BY 2, 3 ORDER BY 2, 3
                ON CONFLICT (account_id, metric, slot, stripe) DO UPDATE SET value = analytics_tallies.value + excluded.value
              )
              SELECT id FROM inserted`,
                sql`SELECT set_config(${TALLIED_SETTING}, '', true)`,
                (rows) => rows.map((row) => row.id)
              )
            ),
      updateMany: (accountId, many) =>
        many.length === 0
          ? Effect.void
          : orDie(sql`
              UPDATE leads AS l SET name = r.name, email = r.email, tags = r.tags, status = r.status,
                assigned_user_id = r.assigned_user_id, attributes = r.attributes,
                marketing_opt_out = nullif(r.marketing_opt_out, 'null'::jsonb), updated_at = r.updated_at
              FROM jsonb_to_recordset(${JSON.stringify(many)}::jsonb) AS r(id text, name text, email text, tags jsonb,
                status text, assigned_user_id uuid, attributes jsonb, marketing_opt_out jsonb, updated_at timestamptz)
              WHERE l.account_id = ${accountId}::uuid AND l.id = r.id`).pipe(Effect.asVoid),
      update: (accountId, lead) =>
        Effect.gen(function* () {
          const holder = yield* orDie(
            sql<{ id: string }>`SELECT id FROM leads
                                WHERE account_id = ${accountId}::uuid AND phone = ${lead.phone} AND id <> ${lead.id}`
          )
          if (holder.length > 0) return yield* phoneTaken(lead.phone)
          const rows = yield* sql<LeadRow>`
            UPDATE leads SET name = ${lead.name}, phone = ${lead.phone}, email = ${lead.email},
              tags = ${JSON.stringify(lead.tags)}::jsonb, status = ${lead.status},
              assigned_user_id = ${lead.assigned_user_id}::uuid, attributes = ${JSON.stringify(lead.attributes)}::jsonb,
              marketing_opt_out = ${optOutValue(lead.marketing_opt_out)}::jsonb, updated_at = ${lead.updated_at}::timestamptz
            WHERE account_id = ${accountId}::uuid AND id = ${lead.id}
            RETURNING ${columns}`.pipe(
            // A concurrent update may take the phone between the check and the write.
            Effect.catchIf(
              (error) => error.reason._tag === "UniqueViolation",
              () => Effect.fail(phoneTaken(lead.phone))
            ),
            Effect.catchTag("SqlError", (error) => orDie(Effect.fail(error)))
          )
          return rows[0] === undefined ? undefined : toLead(rows[0])
        }),
      setMarketingOptOut: (accountId, leadIds, optOut, now) =>
        leadIds.length === 0
          ? Effect.succeed([])
          : orDie(
              sql<{ id: string }>`
                UPDATE leads SET marketing_opt_out = ${optOutValue(optOut)}::jsonb,
                  updated_at = greatest(updated_at, ${now}::timestamptz)
                WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(leadIds)}::text[])
                  AND marketing_opt_out IS ${sql.unsafe(optOut === null ? "NOT NULL" : "NULL")}
                RETURNING id`
            ).pipe(Effect.map((rows) => rows.map((row) => row.id))),
      remove: (accountId, id) =>
        orDie(
          sql<LeadRow>`
            WITH removed AS (
              DELETE FROM leads WHERE account_id = ${accountId}::uuid AND id = ${id} RETURNING ${columns}
            ), counted AS (
              INSERT INTO lead_counts (account_id, stripe, total) SELECT ${accountId}::uuid, ${sql.unsafe(backendStripe)}, -1
              FROM removed
              ON CONFLICT (account_id, stripe) DO UPDATE SET total = lead_counts.total - 1
            )
            SELECT * FROM removed`
        ).pipe(Effect.map(([row]) => (row === undefined ? undefined : toLead(row))))
    })
  })
)
