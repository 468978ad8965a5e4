import { expect } from "vitest"
import { nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The rows of an import's file the store keeps per chunk (`CHUNK_ROWS` in core's LeadJob.ts). */
const CHUNK_ROWS = 1_000

/** A one-row CSV with a fresh phone. */
export const oneRowCsv = () => `name,phone\nImported Lead,${nextPhone()}\n`

/** How many jobs the account has, as its list says. */
const jobCount = async (target: Target, key: string): Promise<number> => {
  const reply = await call(target, "GET", "/api/v1/leads/jobs?limit=1", { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.meta.total
}

/** Starts a bulk change (tags added to no lead) in the account of `key`; its job's id. */
export const makeJob = async (target: Target, key: string): Promise<string> => {
  const reply = await call(target, "POST", "/api/v1/leads/bulk", {
    auth: key,
    json: { filter: { tag: ["none-has-it"] }, add_tags: ["x"] }
  })
  expect(reply.status, reply.text).toBe(202)
  return reply.body.id
}

const readJob = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/leads/jobs/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  // Its progress moves while it runs: what another account must not change is what it is.
  const { id: same, kind, dry_run, total_rows, created_at } = reply.body
  return { id: same, kind, dry_run, total_rows, created_at }
}

const isolation: Resource.Isolation = {
  noun: "lead job",
  make: ({ target }, key) => makeJob(target, key),
  read: ({ target }, key, id) => readJob(target, key, id),
  unknownId: () => neverIssued("ljob")
}

/** A request that must start no job: the account's jobs are as many after it as before. */
const startsNothing = async (target: Target, key: string) => {
  const before = await jobCount(target, key)
  return async () => expect(await jobCount(target, key)).toBe(before)
}

export const resource: Resource.Resource = {
  name: "lead jobs",
  routes: [
    {
      method: "POST",
      path: "/api/v1/leads/imports",
      needs: ["leads:write"],
      succeeds: 202,
      request: async ({ target }, account) => ({
        path: "/api/v1/leads/imports",
        file: { body: oneRowCsv(), contentType: "text/csv" },
        unchanged: await startsNothing(target, account.ownerKey)
      })
    },
    {
      method: "POST",
      path: "/api/v1/leads/bulk",
      needs: ["leads:write"],
      succeeds: 202,
      request: async ({ target }, account) => ({
        path: "/api/v1/leads/bulk",
        json: { filter: { status: "lost" }, add_tags: ["bulk"] },
        unchanged: await startsNothing(target, account.ownerKey)
      })
    },
    {
      method: "GET",
      path: "/api/v1/leads/jobs",
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      lists: "jobs",
      request: async () => ({ path: "/api/v1/leads/jobs" })
    },
    {
      method: "GET",
      path: "/api/v1/leads/jobs/{id}",
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/leads/jobs/${id}` }),
      request: Resource.aimedAt(isolation, (id) => ({ path: `/api/v1/leads/jobs/${id}` }))
    },
    {
      method: "GET",
      path: "/api/v1/leads/export",
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      request: async () => ({ path: "/api/v1/leads/export?format=ndjson" })
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "lead_jobs",
        account: "account_id",
        rows: Resource.perOperation({ "POST /api/v1/leads/imports": 1, "POST /api/v1/leads/bulk": 1 })
      },
      {
        // The fuzzer runs no jobs: an import's chunks stay until its job ends.
        name: "lead_job_chunks",
        account: "account_id",
        rows: Resource.computed((answer) =>
          answer.operation === "POST /api/v1/leads/imports" ? Math.ceil(answer.body.total_rows / CHUNK_ROWS) : 0
        )
      }
    ],
    ids: {
      field: "id",
      list: { path: "/api/v1/leads/jobs", field: "jobs" },
      parameters: ["/api/v1/leads/jobs/{id} id"],
      make: ({ target }, account) => makeJob(target, account.ownerKey)
    }
  }
}
