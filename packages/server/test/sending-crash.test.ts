import { afterAll, describe, expect, it } from "vitest"
import { makeAccount } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as MockGraph from "@leadline/testkit/whatsapp/MockGraph"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"
import { until } from "./support/Until.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const setups = Setups.databases(cleanups)
const MESSAGES = 120

describe.each(setups)("kill -9 while messages are being sent to the Cloud API, on %s", (_name, setup) => {
  it("ends every message in one final state, and WhatsApp saw none of them twice", async () => {
    const graph = await MockGraph.start()
    cleanups.push(() => graph.close())
    // Slow answers, so that sends are in flight when the server dies.
    graph.script(...Array.from({ length: MESSAGES }, () => MockGraph.Reply.success({ delayMs: 40 })))
    const { dataDir, env } = await setup()
    const serverEnv = {
      ...env,
      WHATSAPP_TRANSPORT: "cloud",
      WHATSAPP_APP_SECRET: "crash-test-app-secret",
      WHATSAPP_VERIFY_TOKEN: "crash-test-verify-token",
      WHATSAPP_API_BASE_URL: graph.url,
      // 20 a second: a backlog is still queued when the server dies (unthrottled, the 120 could all
      // be sent or in flight by then, and the restart would have nothing left to show it resumes).
      WHATSAPP_SEND_RATE: "20",
      WHATSAPP_SENDER_LEASE_SECONDS: "2"
    }
    const first = await ServerProcess.start({ dataDir, env: serverEnv })
    // Stopped by the cleanups too, so a failed assertion never leaves a server running.
    cleanups.push(() => first.stop("SIGKILL"))
    const account = await makeAccount(first)
    const channel = await call(first, "POST", "/api/v1/channels", {
      auth: account.ownerKey,
      json: {
        type: "whatsapp",
        name: "Crash line",
        phone_number_id: "5550001",
        display_phone_number: "+16505551111",
        access_token: "EAAG-crash"
      }
    })
    expect(channel.status, channel.text).toBe(201)
    const lead = await call(first, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "Crash Customer", phone: "+14155550199" }
    })
    const ids: Array<string> = []
    for (let batch = 0; batch < MESSAGES / 20; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () =>
          call(first, "POST", "/api/v1/messages", {
            auth: account.ownerKey,
            json: { type: "template", template: { name: "order_update", language: "en_US" }, lead_id: lead.body.id }
          })
        )
      )
      for (const reply of replies) {
        expect(reply.status, reply.text).toBe(201)
        ids.push(reply.body.id)
      }
    }
    await graph.waitFor(10, 20_000)
    expect(await first.stop("SIGKILL")).toBe("SIGKILL")
    const seenAtCrash = graph.requests().length
    expect(seenAtCrash).toBeLessThan(MESSAGES)

    const second = await ServerProcess.start({ dataDir, env: serverEnv })
    cleanups.push(() => second.stop())
    const statusOf = async () => {
      const statuses = new Map<string, { status: string; error: { code: string } | null }>()
      for (const id of ids) {
        const reply = await call(second, "GET", `/api/v1/messages/${id}`, { auth: account.ownerKey })
        statuses.set(id, reply.body)
      }
      return statuses
    }
    const final = await until(statusOf, (all) => [...all.values()].every((m) => m.status !== "queued"), 60_000)
    const byCallback = new Map<string, number>()
    for (const request of graph.requests()) {
      const callback = (request.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data!
      byCallback.set(callback, (byCallback.get(callback) ?? 0) + 1)
    }
    // At most once towards WhatsApp, whatever the crash interrupted.
    expect([...byCallback.entries()].filter(([, count]) => count > 1)).toEqual([])
    for (const [id, message] of final) {
      expect(["sent", "failed"], `${id}: ${message.status}`).toContain(message.status)
      if (message.status === "failed") expect(message.error?.code, id).toBe("outcome_unknown")
      // Sent means WhatsApp has it; a message it never saw cannot be "sent".
      if (message.status === "sent") expect(byCallback.get(id), id).toBe(1)
    }
    // Only the sends under way when it died are in doubt: a wave of 50 at most, and the one
    // before it if its record had not committed.
    const unknown = [...final.values()].filter((m) => m.status === "failed").length
    expect(unknown).toBeLessThanOrEqual(100)
    // Every message it never saw was sent after the restart; the rest, cut off mid-call, are unknown.
    expect(graph.requests().length).toBeGreaterThan(seenAtCrash)
    await second.stop()
  }, 180_000)
})
