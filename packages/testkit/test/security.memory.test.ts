import { afterAll, beforeAll } from "vitest"
import { securitySuite } from "../src/SecuritySuite.ts"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running
beforeAll(async () => {
  server = await TestServer.start({ webhooks: { allowPrivateUrls: true } })
})
afterAll(() => server?.close())

securitySuite("the in-memory stores", () => server)
