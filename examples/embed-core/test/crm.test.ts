import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Crm from "../src/Crm.ts"

describe("Leadline's core embedded in an app", () => {
  it("creates and lists leads as the key's holder, under the scope policy", async () => {
    const { lead, page, refused } = await Effect.runPromise(Crm.demo.pipe(Effect.provide(Crm.layer)))
    expect(lead.phone).toBe("+442079460958")
    expect(page.leads.map((l) => l.id)).toEqual([lead.id])
    expect(page.meta).toEqual({
      limit: 10,
      offset: 0,
      total: 1,
      has_more: false,
      next_offset: null,
      next_starting_after: null,
      previous_ending_before: null
    })
    expect(refused).toMatchObject({ _tag: "PermissionDenied", required: "leads:write" })
  })

  it("refuses an unknown key like the server does", async () => {
    const failure = await Effect.runPromise(
      Crm.asKey(`lk_${"x".repeat(43)}`, Effect.void).pipe(Effect.flip, Effect.provide(Crm.layer))
    )
    expect(failure).toMatchObject({ _tag: "Unauthenticated", reason: "unknown" })
  })
})
