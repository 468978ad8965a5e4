import { describe, expect, it } from "vitest"
import type { LeadJob } from "@leadline/core/leads/LeadJob"
import { bar, summary } from "../src/cli/LeadImport.ts"

const job = (read: number, failed: number, errors: LeadJob["errors"] = []): LeadJob => ({
  id: "ljob_1",
  kind: "import",
  state: "running",
  dry_run: false,
  total_rows: 200,
  counts: { read, created: read - failed, updated: 0, unchanged: 0, failed },
  errors,
  errors_truncated: false,
  failure: null,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  finished_at: null
})

describe("leadline leads import's output", () => {
  it("draws the bar by the rows read of the file's rows", () => {
    expect(bar(job(0, 0), 10)).toBe("[----------]   0% 0/200 rows: 0 created, 0 updated, 0 unchanged, 0 failed")
    expect(bar(job(100, 3), 10)).toBe("[#####-----]  50% 100/200 rows: 97 created, 0 updated, 0 unchanged, 3 failed")
    expect(bar(job(200, 3), 10)).toMatch(/^\[##########\] 100% /)
  })

  it("ends with the first refused rows and says where the rest are", () => {
    const errors = Array.from({ length: 12 }, (_, i) => ({
      row: i + 2,
      lead_id: null,
      field: "phone",
      reason: "bad phone"
    }))
    const text = summary({ ...job(200, 15, errors), state: "succeeded" })
    expect(text.split("\n")).toHaveLength(1 + 10 + 1)
    expect(text).toContain("  row 2 phone: bad phone")
    expect(text).toContain("  … 5 more refused rows: GET /api/v1/leads/jobs/ljob_1")
  })
})
