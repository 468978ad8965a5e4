import { afterAll, describe, expect, it } from "vitest"
import { createChannel } from "@leadline/testkit/channels/ChannelsResource"
import { postWebhook } from "@leadline/testkit/conversations/ConversationsResource"
import { makeAccount } from "@leadline/testkit/Fixtures"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const setups = Setups.databases(cleanups)
const SECRET = "inbound-crash-secret"

/**
 * Meta's traffic as it comes (one message per POST, many at once) while the server is killed:
 * the acknowledgement is sent after the POST's transaction commits, shared or not, so every
 * acknowledged wamid is stored, and Meta's retries of the rest store each exactly once.
 */
describe.each(setups)("kill -9 under concurrent WhatsApp webhooks, on %s", (_name, setup) => {
  it("loses no acknowledged message, and Meta's retries store each message once", async () => {
    const { dataDir, env, query } = await setup()
    const settings = { ...env, WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: "crash" }
    const first = await ServerProcess.start({ dataDir, env: settings })
    cleanups.push(() => first.stop("SIGKILL"))
    const target = { ...first, whatsappAppSecret: SECRET }
    const account = await makeAccount(first)
    const channel = await createChannel(first, account.ownerKey)

    const bodyOf = (wamid: string, from: string) =>
      MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from,
        name: `Customer ${from}`,
        text: `Text ${wamid}`,
        externalId: wamid,
        timestamp: new Date()
      })
    const acknowledged = new Set<string>()
    const attempted: Array<{ wamid: string; from: string }> = []
    let crashed = false
    const sender = async (worker: number) => {
      for (let i = 0; !crashed; i++) {
        // New customers and repeat ones: 16 numbers across the senders.
        const item = { wamid: `wamid.crash.${worker}.${i}`, from: `1415555${String(1000 + ((worker * 7 + i) % 16))}` }
        attempted.push(item)
        try {
          const reply = await postWebhook(target, bodyOf(item.wamid, item.from))
          if (reply.status === 200) acknowledged.add(item.wamid)
          else throw new Error(`unexpected ${reply.status}: ${await reply.text()}`)
        } catch (error) {
          if (!crashed) throw error
        }
      }
    }
    const senders = Array.from({ length: 8 }, (_, worker) => sender(worker))
    await new Promise((resolve) => setTimeout(resolve, 1500))
    crashed = true
    expect(await first.stop("SIGKILL")).toBe("SIGKILL")
    await Promise.all(senders)
    expect(acknowledged.size).toBeGreaterThan(20)

    const stored = async () =>
      (await query<{ external_id: string }>("SELECT external_id FROM messages WHERE direction = 'inbound'")).map(
        (row) => row.external_id
      )
    const afterCrash = new Set(await stored())
    expect(
      [...acknowledged].filter((wamid) => !afterCrash.has(wamid)),
      "acknowledged but not stored"
    ).toEqual([])

    // Meta retries whatever it did not see acknowledged (and sometimes what it did).
    const second = await ServerProcess.start({ dataDir, env: settings })
    cleanups.push(() => second.stop())
    const retried = { ...second, whatsappAppSecret: SECRET }
    const replies = await Promise.all(
      attempted.map(({ wamid, from }) => postWebhook(retried, bodyOf(wamid, from)).then((reply) => reply.status))
    )
    expect(replies.every((status) => status === 200)).toBe(true)
    expect(await second.stop()).toBe(0)
    const all = await stored()
    expect(all.length).toBe(attempted.length)
    expect(new Set(all).size).toBe(attempted.length)
    const [leads] = await query<{ n: number }>("SELECT count(DISTINCT phone)::int AS n FROM leads")
    expect(leads!.n).toBe(new Set(attempted.map(({ from }) => from)).size)
    console.info(`inbound crash: ${acknowledged.size} acknowledged, ${attempted.length - acknowledged.size} in flight`)
  }, 120_000)
})
