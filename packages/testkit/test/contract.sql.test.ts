import { afterAll, beforeAll, describe } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { contractSuite } from "../src/ContractSuite.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/** The same contract suite as on the memory wiring, on each SQL database. */
const onDatabase = (name: string, postgres: "when-configured" | "never") =>
  describe(name, () => {
    let database: TestDatabase.TestDatabase
    let server: TestServer.Running

    beforeAll(async () => {
      database = await TestDatabase.make({ postgres })
      server = await TestServer.start({ app: SqlApp.layer(database.config) })
    })
    afterAll(async () => {
      await server?.close()
      await database?.dispose()
    })

    contractSuite("contract", () => server, { movableClock: true })
  })

onDatabase("on embedded PGlite", "never")
onDatabase("on PostgreSQL (PGlite when TEST_DATABASE_URL is unset)", "when-configured")
