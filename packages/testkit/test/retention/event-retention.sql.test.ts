import { eventRetention } from "./EventRetention.ts"

// PostgreSQL when TEST_DATABASE_URL is set, PGlite otherwise.
eventRetention("sql", true)
