import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { environment } from "./support/ServerProcess.ts"

const root = join(import.meta.dirname, "..", "..", "..")

/** The bash blocks of the README's walk-through, in order, as one script. */
const walkthrough = (): string => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const section = readme.split("<!-- walkthrough:start -->")[1]!.split("<!-- walkthrough:end -->")[0]!
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1]).join("\n")
}

let server: ChildProcess
let baseUrl: string
let dataDir: string
let ownerKey: string

/** Runs `npm start` as a user would, on a free port and a fresh data directory. */
const startServer = () =>
  new Promise<string>((resolve, reject) => {
    server = spawn("npm", ["start"], {
      cwd: root,
      // The embedded database and the token file in the data directory, whatever the developer's shell sets.
      env: environment({ PORT: "0", HOST: "127.0.0.1", LEADLINE_DATA_DIR: dataDir }),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let log = ""
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 30_000)
    const onData = (chunk: Buffer) => {
      log += chunk.toString()
      const listening = /Listening on http:\/\/[^:]+:(\d+)/.exec(log)
      if (listening) {
        clearTimeout(timer)
        resolve(`http://127.0.0.1:${listening[1]}`)
      }
    }
    server.stdout!.on("data", onData)
    server.stderr!.on("data", onData)
    server.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${log}`)))
  })

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "leadline-readme-"))
  baseUrl = await startServer()
})

afterAll(() => {
  // npm starts node as its child: end the whole process group.
  if (server.pid !== undefined && server.exitCode === null) process.kill(-server.pid, "SIGTERM")
  rmSync(dataDir, { recursive: true, force: true })
})

describe("the README", () => {
  it("has a walk-through that works as written against `npm start`", () => {
    const result = spawnSync("bash", ["--noprofile", "--norc", "-euo", "pipefail", "-c", walkthrough()], {
      cwd: root,
      env: environment({ BASH_ENV: undefined, BASE: baseUrl, LEADLINE_DATA_DIR: dataDir }),
      encoding: "utf8",
      timeout: 60_000
    })
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" })
    const out = result.stdout
    expect(out).toMatch(/"api_key":"lk_[A-Za-z0-9_-]{43}"/)
    expect(out).toContain('"auth_type":"api_key"')
    expect(out).toContain('"subscription":{"plan_id":"free","status":"active"}')
    expect(out).toContain('"phone":"+442079460958"')
    expect(out.toLowerCase()).toContain("idempotent-replayed: true")
    expect(out).toContain('"status":"qualified"')
    // The import: one lead made, the row without a phone refused and named; the export reads it back.
    expect(out).toContain('"counts":{"read":2,"created":1,"updated":0,"unchanged":0,"failed":1}')
    expect(out).toContain('"errors":[{"row":3,"lead_id":null,"field":"phone"')
    expect(out).toMatch(
      /\nid,name,phone,email,tags,status,assigned_user_id,attributes,marketing_opt_out,created_at,updated_at\nld_[0-9a-z]{26},Mary Jackson,\+14155550175,,imported;engineer,new,/
    )
    expect(out).toContain('{"error":"Insufficient scope: requires leads:write","code":"forbidden"}')
    expect(out).toMatch(/\{"id":"ld_[0-9a-z]{26}","deleted":true\}/)
    expect(out).toMatch(/"external_id":"wamid\.SIM[^"]+"\}/)
    expect(out).toContain('"text":"Yes, two left. Shall I keep one for you?"')
    expect(out).toContain('"status":"read"')
    expect(out).toContain('"text":"Is the blue one in stock?"')
    expect(out).toContain('"usage":{"messages_used":1,"messages_limit":1000}')
    // Buttons: Grace's tap answers the question, the thread is marked read, her answer gets a reaction.
    expect(out).toMatch(/\ninteractive: Yes, keep one\nanswers msg_[0-9a-z]{26}\n/)
    expect(out).toMatch(/\{"conversation_id":"cv_[0-9a-z]{26}","message_id":"msg_[0-9a-z]{26}","read_at":"[^"]+"\}\n/)
    expect(out).toContain("\nreaction 👍\n")
    expect(out).toContain('"path":"interactive.action.buttons.0.reply.title"')
    // The campaign to the two leads tagged newsletter: matched, queued, sent and read by both.
    expect(out).toMatch(/\n2\nqueued\n/)
    expect(out).toMatch(/\n\{"at":"[^"]+","source":"whatsapp_keyword","reason":"STOP"\}\n/)
    expect(out).toMatch(/\nred\nyellow\n/)
    expect(out).toContain(
      '"status":"completed","audience_count":null,"stats":{"total":2,"queued":0,"sent":2,"delivered":2,"read":2,"failed":0,"skipped":0,"cancelled":0}'
    )
    expect(out).toMatch(
      /"recipients":\[\{"lead_id":"ld_[0-9a-z]{26}","phone":"\+\d+","status":"read","message_id":"msg_/
    )
    // The order: priced from the catalogue, stock taken, moved with If-Match, its events in the log.
    expect(out).toMatch(
      /"items":\[\{"id":"li_[0-9a-z]{26}","product_id":"prod_[0-9a-z]{26}","sku":"PAO-FRANCES-10","name":"Pão francês \(10 un\.\)","unit_amount":1290,"quantity":2,"amount_total":2580\}/
    )
    expect(out).toContain('"amount_subtotal":2880,"amount_shipping":500,"amount_discount":0,"amount_total":3380')
    expect(out).toMatch(/\n40\n/i)
    expect(out.toLowerCase()).toContain('etag: "2"')
    expect(out).toContain('"code":"precondition_failed"')
    expect(out).toMatch(/\ndelivered\npaid\n/)
    expect(out).toContain(
      '{"error":"Cannot change status from delivered to pending","code":"invalid_transition","details":[]}'
    )
    expect(out).toContain("order.created order.status_changed order.status_changed")
    expect(out).toContain(
      "\nlog: order.status_changed delivered, order.status_changed confirmed, order.created pending\n"
    )
    // Order notices on: each status move queued a text to Grace; the last says delivered, in WhatsApp's word.
    expect(out).toContain('{"enabled":true,"template":null}')
    expect(out).toMatch(/\nYour order ord_[0-9a-z]{26} is now completed\.\n/)
    // The knowledge base, the agent and its simulation with the builtin model.
    expect(out).toContain("all_terms Fees, some_terms Delivery")
    expect(out).toContain("\nanswer\nDelivery costs R$ 12, free above R$ 150.\nretrieval-v1\nkeyword\n")
    // Enabled, the agent answers a customer on WhatsApp.
    expect(out).toContain("\nagent: Delivery costs R$ 12, free above R$ 150.\n")
    // Grace's photo: fetched from the simulator, kept, and served with its type and ETag.
    const photo = /"media":(\{[^}]*\})/.exec(out.slice(out.indexOf('"type":"image"')))
    expect(JSON.parse(photo![1]!)).toEqual({
      provider_media_id: expect.stringMatching(/^sim-photo-\d+$/),
      mime_type: "image/jpeg",
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      filename: null,
      state: "stored",
      reason: null,
      size: 4096
    })
    expect(out.toLowerCase()).toContain("content-type: image/jpeg")
    expect(out.toLowerCase()).toContain("content-length: 4096")
    expect(out.toLowerCase()).toMatch(/etag: "[0-9a-f]{64}"/)
    expect(out).toMatch(/\nLeadline simulator media sim-photo-\d+\n/)
    // A file uploaded, then sent by its id: handed to the simulator, which took it and played it read.
    expect(out).toMatch(
      /\{"id":"med_[0-9a-z]{26}","type":"document","mime_type":"application\/pdf","size":\d+,"sha256":"[0-9a-f]{64}","filename":"price-list\.pdf","created_at":"[^"]+"\}\n/
    )
    const sentFile = /\nread\n(\{.*"type":"document".*\})\n/.exec(out)
    expect(JSON.parse(sentFile![1]!)).toMatchObject({
      type: "document",
      status: "read",
      text: "Our prices this week",
      media: {
        media_id: expect.stringMatching(/^med_/),
        link: null,
        mime_type: "application/pdf",
        filename: "price-list.pdf",
        caption: "Our prices this week"
      }
    })
    // A template submitted, approved by the simulator's status webhook, synced, and checked on a send.
    expect(out).toContain("\nAPPROVED\n")
    expect(out).toMatch(
      /\{"business_accounts":\[\{"business_account_id":"100200300","templates":0,"removed":0\},\{"business_account_id":"1\d+","templates":1,"removed":0\}\],"templates":1\}\n/
    )
    expect(out).toContain(
      '{"error":"Invalid request body: template.components: order_ready (en_US) takes 2 body parameters; 1 given","code":"validation_error"'
    )
    expect(out).toMatch(/validation_error.*\n\s*queued\n?$/s)
    ownerKey = /"api_key":"(lk_[A-Za-z0-9_-]{43})"/.exec(out)![1]!
  })

  it("keeps the walk-through's account across a server restart", async () => {
    if (server.pid !== undefined) process.kill(-server.pid, "SIGTERM")
    await new Promise((resolve) => server.once("exit", resolve))
    baseUrl = await startServer()
    const me = await fetch(`${baseUrl}/api/me`, { headers: { authorization: `Bearer ${ownerKey}` } })
    expect(me.status).toBe(200)
    const leads = await fetch(`${baseUrl}/api/v1/leads`, { headers: { authorization: `Bearer ${ownerKey}` } })
    // Ada was deleted; Mary (imported), Grace and Alan, who wrote in on WhatsApp, and the campaign's two leads remain.
    expect(((await leads.json()) as { meta: { total: number } }).meta.total).toBe(5)
  })
})
