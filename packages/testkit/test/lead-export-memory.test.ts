import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { type AccountFixture, makeAccount } from "../src/Fixtures.ts"
import { postImport, waitForJob } from "../src/leads/LeadJobsContract.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"
import { peakGrowth } from "./media/PeakMemory.ts"

const ROWS = 30_000

/** A CSV of `rows` leads with phones of their own and a few columns each. */
const csvOf = (rows: number) => {
  const lines = ["name,phone,email,tags,status"]
  for (let i = 0; i < rows; i++) {
    // Valid San Francisco numbers: exchanges from 234 up, 10,000 lines each.
    const phone = `+1415${234 + Math.floor(i / 10_000)}${String(i % 10_000).padStart(4, "0")}`
    lines.push(`Lead ${i},${phone},lead${i}@example.com,imported;bulk,new`)
  }
  return `${lines.join("\n")}\n`
}

/** Reads the export as it streams, keeping only its size and line count. */
const drain = async (server: TestServer.Running, key: string, query: string) => {
  const response = await fetch(`${server.baseUrl}/api/v1/leads/export?${query}`, {
    headers: { authorization: `Bearer ${key}` }
  })
  expect(response.status).toBe(200)
  let bytes = 0
  let lines = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (const byte of chunk) if (byte === 10) lines++
  }
  return { bytes, lines }
}

describe(`an export of ${ROWS.toLocaleString("en")} leads (PostgreSQL when TEST_DATABASE_URL is set, else PGlite)`, () => {
  let database: TestDatabase.TestDatabase
  let server: TestServer.Running
  let account: AccountFixture

  beforeAll(async () => {
    database = await TestDatabase.make({ postgres: "when-configured" })
    server = await TestServer.start({ app: SqlApp.layer(database.config) })
    account = await makeAccount(server)
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await database?.dispose()
  })

  it("imports them in chunks as one job", async () => {
    const started = Date.now()
    const reply = await postImport(server, account.ownerKey, csvOf(ROWS))
    expect(reply.status, reply.text).toBe(202)
    const job = await waitForJob(server, account.ownerKey, reply.body.id, 240_000)
    expect(job.state).toBe("succeeded")
    expect(job.counts).toEqual({ read: ROWS, created: ROWS, updated: 0, unchanged: 0, failed: 0 })
    console.info(`imported ${ROWS} rows in ${Date.now() - started} ms`)
  }, 300_000)

  it("streams them with flat memory: a page at a time, never the whole list", async () => {
    // A first export brings the store and the server to their working size (PGlite's memory, caches).
    const first = await drain(server, account.ownerKey, "format=csv&tag=imported")
    expect(first.lines).toBe(ROWS + 1)
    let second = { bytes: 0, lines: 0 }
    const grown = await peakGrowth(async () => {
      second = await drain(server, account.ownerKey, "format=csv&tag=imported")
    })
    expect(second).toEqual(first)
    // Holding every lead at once would add several times the file's size; a page of 500 is a small part of it.
    expect(grown).toBeLessThan(second.bytes / 2)
    console.info(`exported ${second.bytes} bytes; the process grew by at most ${grown} bytes`)
  }, 300_000)
})
