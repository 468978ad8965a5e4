/**
 * Accounts, keys, webhook endpoints and leads for the baseline, written straight into its own
 * schema (Schema.ts): what the harness and the tests use instead of an operator API.
 * Every function takes a connection string or anything with `query` (a pool, a client), and
 * applies the schema first, so it also works on a database the server has not started on yet.
 */
import { randomBytes, randomUUID } from "node:crypto"
import pg from "pg"
import { migrate, type Queryable } from "./Schema.ts"
import { sha256 } from "./Server.ts"

export type Database = string | Queryable

const use = async <A>(database: Database, f: (db: Queryable) => Promise<A>): Promise<A> => {
  if (typeof database !== "string") {
    await migrate(database)
    return f(database)
  }
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  try {
    await migrate(client)
    return await f(client)
  } finally {
    await client.end()
  }
}

const newKey = () => `lk_${randomBytes(32).toString("base64url")}`

export interface Account {
  readonly accountId: string
  readonly ownerUserId: string
  /** A full-access key of the owner (no scopes). */
  readonly apiKey: string
}

/** An account, its owner and a full-access key of the owner, in one statement. */
export const createAccount = (database: Database, name = "Bench"): Promise<Account> =>
  use(database, async (db) => {
    const accountId = randomUUID()
    const ownerUserId = randomUUID()
    const apiKey = newKey()
    await db.query(
      `WITH account AS (INSERT INTO accounts (id, name, owner_user_id) VALUES ($1, $2, $3)),
            owner AS (INSERT INTO users (id, account_id, role) VALUES ($3, $1, 'owner'))
       INSERT INTO api_keys (id, account_id, user_id, key_hash, scopes) VALUES ($4, $1, $3, $5, '{}')`,
      [accountId, name, ownerUserId, randomUUID(), sha256(apiKey)]
    )
    return { accountId, ownerUserId, apiKey }
  })

/** Another key of a user of the account (the owner by default), limited to `scopes` (none: full access). */
export const createApiKey = (
  database: Database,
  account: Pick<Account, "accountId" | "ownerUserId">,
  scopes: ReadonlyArray<string>,
  userId: string = account.ownerUserId
): Promise<string> =>
  use(database, async (db) => {
    const apiKey = newKey()
    await db.query("INSERT INTO api_keys (id, account_id, user_id, key_hash, scopes) VALUES ($1, $2, $3, $4, $5)", [
      randomUUID(),
      account.accountId,
      userId,
      sha256(apiKey),
      scopes
    ])
    return apiKey
  })

/** A webhook endpoint of the account, subscribed to `events`; returns its id. */
export const addWebhookEndpoint = (
  database: Database,
  accountId: string,
  url: string,
  events: ReadonlyArray<string> = ["lead.created"]
): Promise<string> =>
  use(database, async (db) => {
    const id = randomUUID()
    await db.query("INSERT INTO webhook_endpoints (id, account_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)", [
      id,
      accountId,
      url,
      events,
      `whsec_${randomBytes(32).toString("base64")}`
    ])
    return id
  })

/**
 * `count` leads in the account, oldest first: created_at one millisecond apart from
 * 2026-01-01, ids `ld_seed<8 hex of the account id><11-digit number>` (lead ids are unique
 * across accounts here), phones +1 200 000 0001 and on (distinct from the harness's creates).
 */
export const seedLeads = (database: Database, accountId: string, count: number): Promise<void> =>
  use(database, async (db) => {
    await db.query(
      `INSERT INTO leads (id, account_id, name, phone, email, tags, status, assigned_user_id, attributes, created_at, updated_at)
       SELECT 'ld_seed' || left(replace($1::uuid::text, '-', ''), 8) || lpad(i::text, 11, '0'), $1::uuid, 'Seed ' || i, '+1' || (2000000000 + i)::text, NULL,
              '{seed}', 'new', NULL, '{"source":"seed"}',
              timestamptz '2026-01-01' + i * interval '2.5 seconds', timestamptz '2026-01-01' + i * interval '2.5 seconds'
         FROM generate_series(1, $2::int) AS i`,
      [accountId, count]
    )
    // What autovacuum would have done by the time an account is this big: statistics and the
    // visibility map (which lets count(*) use an index-only scan).
    await db.query("VACUUM (ANALYZE) leads")
  })
