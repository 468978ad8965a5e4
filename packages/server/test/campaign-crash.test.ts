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
const RECIPIENTS = 150

describe.each(setups)("kill -9 while a campaign is being sent to the Cloud API, on %s", (_name, setup) => {
  it("completes the campaign after the restart, with every recipient sent at most once", async () => {
    const graph = await MockGraph.start()
    cleanups.push(() => graph.close())
    // Slow answers, so that sends are in flight when the server dies.
    graph.script(...Array.from({ length: RECIPIENTS }, () => MockGraph.Reply.success({ delayMs: 40 })))
    const { dataDir, env } = await setup()
    const serverEnv = {
      ...env,
      WHATSAPP_TRANSPORT: "cloud",
      WHATSAPP_APP_SECRET: "crash-test-app-secret",
      WHATSAPP_VERIFY_TOKEN: "crash-test-verify-token",
      WHATSAPP_API_BASE_URL: graph.url,
      WHATSAPP_SEND_RATE: "0",
      WHATSAPP_SENDER_LEASE_SECONDS: "2"
    }
    const first = await ServerProcess.start({ dataDir, env: serverEnv })
    cleanups.push(() => first.stop("SIGKILL"))
    const account = await makeAccount(first)
    const owner = account.ownerKey
    const channel = await call(first, "POST", "/api/v1/channels", {
      auth: owner,
      json: {
        type: "whatsapp",
        name: "Crash line",
        phone_number_id: "5550002",
        display_phone_number: "+16505551111",
        access_token: "EAAG-crash"
      }
    })
    expect(channel.status, channel.text).toBe(201)
    for (let start = 0; start < RECIPIENTS; start += 25) {
      const replies = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          call(first, "POST", "/api/v1/leads", {
            auth: owner,
            json: { name: `Customer ${start + i}`, phone: `+1415555${String(1000 + start + i)}`, tags: ["newsletter"] }
          })
        )
      )
      for (const reply of replies) expect(reply.status, reply.text).toBe(201)
    }
    const campaign = await call(first, "POST", "/api/v1/campaigns", {
      auth: owner,
      json: {
        name: "Crash sale",
        template: {
          name: "sale",
          language: "en_US",
          components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.name}}" }] }]
        },
        audience: { tags: ["newsletter"], statuses: [], lead_ids: [], exclude_tags: [] }
      }
    })
    expect(campaign.status, campaign.text).toBe(201)
    const queued = await call(first, "POST", `/api/v1/campaigns/${campaign.body.id}/queue`, { auth: owner })
    expect(queued.status, queued.text).toBe(200)
    await graph.waitFor(10, 20_000)
    expect(await first.stop("SIGKILL")).toBe("SIGKILL")
    const seenAtCrash = graph.requests().length
    expect(seenAtCrash).toBeLessThan(RECIPIENTS)

    const second = await ServerProcess.start({ dataDir, env: serverEnv })
    cleanups.push(() => second.stop())
    const read = async () =>
      (await call(second, "GET", `/api/v1/campaigns/${campaign.body.id}`, { auth: owner })).body as {
        status: string
        stats: Record<string, number>
      }
    const done = await until(read, (c) => c.status === "completed", 90_000)
    expect(done.status).toBe("completed")
    expect(done.stats.queued).toBe(0)
    expect(done.stats.total).toBe(RECIPIENTS)
    expect(done.stats.sent + done.stats.failed).toBe(RECIPIENTS)

    const byCallback = new Map<string, number>()
    for (const request of graph.requests()) {
      const callback = (request.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data!
      byCallback.set(callback, (byCallback.get(callback) ?? 0) + 1)
    }
    // At most once towards WhatsApp, whatever the crash interrupted.
    expect([...byCallback.entries()].filter(([, count]) => count > 1)).toEqual([])
    const recipients: Array<{ message_id: string; status: string; error: { code: string } | null }> = []
    for (let offset = 0; offset < RECIPIENTS; offset += 100) {
      const page = await call(
        second,
        "GET",
        `/api/v1/campaigns/${campaign.body.id}/recipients?limit=100&offset=${offset}`,
        {
          auth: owner
        }
      )
      recipients.push(...page.body.recipients)
    }
    expect(recipients).toHaveLength(RECIPIENTS)
    for (const recipient of recipients) {
      // Sent means WhatsApp has it exactly once; failed only because the crash left it in doubt.
      if (recipient.status === "sent") expect(byCallback.get(recipient.message_id), recipient.message_id).toBe(1)
      else {
        expect(recipient.status, recipient.message_id).toBe("failed")
        expect(recipient.error?.code).toBe("outcome_unknown")
      }
    }
    // Only the waves under way when it died are in doubt; everything else went out after the restart.
    expect(done.stats.failed).toBeLessThanOrEqual(100)
    expect(graph.requests().length).toBeGreaterThan(seenAtCrash)
    await second.stop()
  }, 180_000)
})
