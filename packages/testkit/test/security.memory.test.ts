import { securitySuite } from "./SecuritySuite.ts"

securitySuite({ name: "the in-memory stores", app: async () => undefined, dispose: async () => {} })
