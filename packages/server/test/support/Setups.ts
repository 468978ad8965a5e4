import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import * as Postgres from "./Postgres.ts"
import * as ServerProcess from "./ServerProcess.ts"

export interface Setup {
  readonly dataDir: string
  readonly env: Record<string, string>
  /** Runs one query on the server's database; for the embedded one, only while no server holds it. */
  readonly query: <A>(statement: string) => Promise<ReadonlyArray<A>>
}

type Cleanup = () => Promise<unknown> | unknown

/** One query on a data directory's embedded database; only while no process holds it. */
export const queryEmbedded =
  (dataDir: string) =>
  async <A>(statement: string): Promise<ReadonlyArray<A>> => {
    const db = await PGlite.create(join(dataDir, "pglite"))
    try {
      return (await db.query<A>(statement)).rows
    } finally {
      await db.close()
    }
  }

/**
 * The databases a server process can run on here: always the embedded one, and
 * a fresh schema on the PostgreSQL server when `TEST_DATABASE_URL` names one.
 * What each setup makes is undone by the cleanups it registers.
 */
export const databases = (cleanups: Array<Cleanup>): Array<[string, () => Promise<Setup>]> => {
  const embedded = async (): Promise<Setup> => {
    const dataDir = ServerProcess.tempDataDir()
    cleanups.push(() => ServerProcess.removeDir(dataDir))
    return {
      dataDir,
      env: {},
      query: queryEmbedded(dataDir)
    }
  }
  const setups: Array<[string, () => Promise<Setup>]> = [["embedded PGlite", embedded]]
  const url = Postgres.url
  if (url !== undefined) {
    setups.push([
      "PostgreSQL",
      async () => {
        const dataDir = ServerProcess.tempDataDir()
        const schema = await Postgres.freshSchema(url)
        cleanups.push(() => ServerProcess.removeDir(dataDir), schema.drop)
        return {
          dataDir,
          env: { DATABASE_URL: schema.databaseUrl },
          query: <A>(statement: string) => Postgres.query<A>(schema.databaseUrl, statement)
        }
      }
    ])
  }
  return setups
}
