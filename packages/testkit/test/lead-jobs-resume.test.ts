import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { systemPrincipal } from "@leadline/core/auth/SystemPrincipal"
import * as Job from "@leadline/core/leads/LeadJob"
import { LeadJobRunner } from "@leadline/core/leads/LeadJobRunner"
import { LeadJobs } from "@leadline/core/leads/LeadJobs"
import { LeadJobsRepo } from "@leadline/core/leads/LeadJobsRepo"
import { LeadsRepo } from "@leadline/core/leads/LeadsRepo"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"

const ACCOUNT = "00000000-0000-4000-8000-0000000000aa"

/** A file of `rows` leads with phones of their own, as the transport reads it. */
const fileOf = (rows: number, exchange: number) => ({
  format: "ndjson" as const,
  rows: Array.from({ length: rows }, (_, i) => ({
    row: i + 1,
    values: { name: `Lead ${i}`, phone: `+1415${exchange}${String(i).padStart(4, "0")}` }
  }))
})

const iso = (millis: number) => new Date(millis).toISOString()

/**
 * A runner that dies holding a job (docs/contract.md, "Imports, exports and bulk changes"): its lease
 * keeps the others off until it runs out; then the next runner takes the job over at the first chunk
 * that was not committed, and applies each of the rest once.
 */
describe("a lead job whose runner died", () => {
  it("waits for the lease, then resumes at the first chunk not committed", async () => {
    await Effect.gen(function* () {
      const jobs = yield* LeadJobs
      const repo = yield* LeadJobsRepo
      const leads = yield* LeadsRepo
      const runner = yield* LeadJobRunner

      // Held by a runner whose lease has a minute to go: no other runner takes it.
      const held = yield* jobs.startImport(fileOf(10, 234), {})
      const now = Date.now()
      const first = yield* repo.claim("dead-runner", iso(now), iso(now + 60_000))
      expect(first?.job.id).toBe(held.id)
      expect(yield* runner.runOnce).toBe(0)
      expect((yield* jobs.get(held.id)).counts.read).toBe(0)

      // Another died after committing its first chunk (1,000 rows), and its lease has run out.
      const crashed = yield* jobs.startImport(fileOf(2_500, 235), {})
      const claimed = yield* repo.claim("dead-runner", iso(now), iso(now - 1))
      expect(claimed?.job.id).toBe(crashed.id)
      const afterFirst = Job.progressed(
        claimed!.job,
        { read: Job.CHUNK_ROWS, created: Job.CHUNK_ROWS, updated: 0, unchanged: 0, failed: 0 },
        [],
        iso(now)
      )
      expect(yield* repo.advance(ACCOUNT, afterFirst, "1", "dead-runner", iso(now - 1))).toBe(true)

      expect(yield* runner.runOnce).toBe(1)
      const done = yield* jobs.get(crashed.id)
      expect(done.state).toBe("succeeded")
      expect(done.counts).toEqual({ read: 2_500, created: 2_500, updated: 0, unchanged: 0, failed: 0 })
      // Only the chunks after the committed one were applied by the runner that took over.
      expect(yield* leads.total(ACCOUNT)).toBe(1_500)
      // The dead runner's lease is gone: its late write is refused, so its transaction would roll back.
      expect(yield* repo.advance(ACCOUNT, done, "3", "dead-runner", iso(now + 60_000))).toBe(false)
    }).pipe(
      Effect.provideService(CurrentPrincipal, systemPrincipal(ACCOUNT, "test")),
      Effect.provide(MemoryApp.layer),
      Effect.runPromise
    )
  })
})
