import { afterAll, beforeAll } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { securitySuite } from "../src/SecuritySuite.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

// PostgreSQL when TEST_DATABASE_URL is set, else PGlite: object-level checks are SQL's WHERE clauses.
const database = await TestDatabase.make()
let server: TestServer.Running
beforeAll(async () => {
  server = await TestServer.start({ app: SqlApp.layer(database.config), webhooks: { allowPrivateUrls: true } })
})
afterAll(async () => {
  await server?.close()
  await database.dispose()
})

securitySuite(database.label, () => server)
