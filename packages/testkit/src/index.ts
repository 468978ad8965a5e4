/**
 * The testkit's light entry point: a test server, fixtures, HTTP helpers, the mock webhook
 * receiver, Meta's mock Graph API and in-memory layers. None of it loads vitest or fast-check.
 * The heavy parts have entry points of their own:
 * - `@leadline/testkit/ContractSuite` and `@leadline/testkit/SecuritySuite`: the HTTP contract
 *   and the OWASP API Security Top 10, against a test server or a deployment (need vitest);
 * - `@leadline/testkit/Fuzz`: the OpenAPI-driven fuzzer (needs fast-check).
 */
export * as AdjustableClock from "./AdjustableClock.ts"
export * as Fixtures from "./Fixtures.ts"
export * as Http from "./Http.ts"
export * as InMemory from "./InMemory.ts"
export * as LiveTarget from "./LiveTarget.ts"
export * as MockGraph from "./whatsapp/MockGraph.ts"
export * as MockReceiver from "./MockReceiver.ts"
export * as TcpProxy from "./TcpProxy.ts"
export * as TestDatabase from "./TestDatabase.ts"
export * as TestServer from "./TestServer.ts"
