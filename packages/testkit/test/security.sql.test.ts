import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import * as TestDatabase from "../src/TestDatabase.ts"
import { securitySuite } from "./SecuritySuite.ts"

// PostgreSQL when TEST_DATABASE_URL is set, else PGlite: object-level checks are SQL's WHERE clauses.
const database = await TestDatabase.make()

securitySuite({
  name: database.label,
  app: async () => SqlApp.layer(database.config),
  dispose: () => database.dispose()
})
