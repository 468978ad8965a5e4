import { afterAll, beforeAll } from "vitest"
import { contractSuite } from "../src/ContractSuite.ts"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

contractSuite("contract on the in-memory wiring", () => server, { movableClock: true })
