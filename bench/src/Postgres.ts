import pg from "pg"

/** The server benchmarks run on: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local default. */
export const serverUrl = () =>
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export const withDatabase = (url: string, database: string) => {
  const next = new URL(url)
  next.pathname = `/${database}`
  return next.toString()
}

export const query = async <A = Record<string, unknown>>(url: string, text: string, params: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, params)).rows as Array<A>
  } finally {
    await client.end()
  }
}

/**
 * A fresh database for one benchmark run (`label` tells two of one run apart); `drop` removes it.
 * BENCH_DB_PREFIX names it (leadline_bench_ unless set), so runs sharing a server keep theirs apart.
 */
export const freshDatabase = async (label = "") => {
  const admin = serverUrl()
  const name = `${process.env.BENCH_DB_PREFIX ?? "leadline_bench_"}${label === "" ? "" : `${label}_`}${Date.now().toString(36)}`
  await query(admin, `CREATE DATABASE ${name}`)
  return {
    name,
    url: withDatabase(admin, name),
    drop: () =>
      process.env.BENCH_KEEP_DB
        ? Promise.resolve()
        : query(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)
  }
}

export const version = async (url: string) =>
  (await query<{ v: string }>(url, "SELECT current_setting('server_version') AS v"))[0]!.v
