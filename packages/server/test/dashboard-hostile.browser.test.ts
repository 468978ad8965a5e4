import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import { previewText } from "@leadline/core/conversations/Conversation"
import * as FakeOpenAi from "@leadline/testkit/ai/FakeOpenAi"
import * as Browsers from "./support/Browser.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import { until } from "./support/Until.ts"

/**
 * The dashboard against hostile content (issue 35): lead names, message texts, product names,
 * knowledge sources and an agent's answers holding HTML, script and URL payloads, seeded through
 * the real API, the WhatsApp simulator and a scripted model. Every page that shows them must show
 * them as text and run nothing: no dialog, no request to another origin, no console error, no
 * CSP violation, no element a payload would have made; links only for http(s) addresses.
 */
const executable = Browsers.chromiumPath()
if (executable === undefined) {
  if (process.env.CI === "true") throw new Error(`${Browsers.MISSING} (CI must have it)`)
  console.warn(`dashboard hostile-payload browser tests NOT RUN: ${Browsers.MISSING}`)
}

/** Each at most 100 characters (an agent's name), without leading or trailing spaces. */
const PAYLOADS = [
  `<script>alert("script")</script>`,
  `<img src=x onerror=alert("img")>`,
  `<svg onload=alert("svg")><circle r=9></svg>`,
  `"><iframe src="javascript:alert('iframe')"></iframe>`,
  `'><img src="https://evil.example/pixel.png">`,
  `<a href="javascript:alert('a')">click me</a>`,
  `javascript:alert('scheme')`,
  `data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==`,
  `vbscript:msgbox("vb")`,
  `{{constructor.constructor('alert("template")')()}}`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder is the payload, kept as typed
  "${alert('literal')} #{7*7} <%= 7*7 %>",
  `</textarea><script>alert("textarea")</script>`,
  `<style>@import "https://evil.example/x.css";</style>`,
  `<meta http-equiv="refresh" content="0;url=https://evil.example/">`,
  `<details open ontoggle=alert("details")>`,
  `&lt;b&gt;entities stay as typed&lt;/b&gt; &amp; &#x3C;`,
  `<!-- an unclosed comment`,
  "\u202Eexe.txt\u202C mirrored, zero\u200Bwidth\u200Djoin\u2060er",
  "\u202Ean override never closed",
  "عربى <b>mixed</b> עברית"
] as const

/** A 200-character name (the limit) with no space to wrap at. */
const LONG_NAME = "<b>".repeat(66).concat("<i")
/** A message near WhatsApp's 4,096 characters, one unbroken word. */
const LONG_TEXT = `<script>alert(${"9".repeat(10)})</script>`.repeat(114)

/** An https address becomes a link, trailing punctuation left out; no other scheme does. */
const LINKS_TEXT = [
  "See https://example.com/a?b=1&c=2, or (https://example.org/path).",
  `Never javascript:alert('js') JAVASCRIPT:alert(2) data:text/html,<script>alert(3)</script>`,
  `vbscript:msgbox(4) file:///etc/passwd //evil.example/x <a href="https://evil.example">x</a>`
].join("\n")
const LINKS = ["https://example.com/a?b=1&c=2", "https://example.org/path", "https://evil.example"]

/** An inbox row's last message, as the API cuts it (docs/contract-messaging.md §4.1). */
const preview = (text: string) => previewText({ type: "text", text, template: null, media: null })

/** What the scripted model answers every question with. */
const AGENT_ANSWER = `Delivery is free <img src=x onerror=alert("answer")> {{constructor.constructor('alert(1)')()}} javascript:alert('answer') https://example.net/terms`

/** The question the agent is asked (its words are in every knowledge source). */
const QUESTION = "How much does delivery cost?"

/**
 * What a payload read as HTML would have made: frames, images, scripts other than the page's own,
 * styles, an event-handler attribute, or an address that is neither http(s), the dashboard's own
 * nor a fragment. The page has none.
 */
const INTRUDERS = `(() => {
  const found = [...document.querySelectorAll(
    "iframe, frame, object, embed, img, svg, math, style, base, meta[http-equiv], " +
    "script:not([type=module][src^='/dashboard/assets/']), link:not([rel=icon]):not([rel=stylesheet])"
  )]
  for (const element of document.querySelectorAll("*"))
    for (const attribute of element.attributes)
      if (/^on/i.test(attribute.name) ||
          (/^(href|src|action|formaction|data|xlink:href)$/i.test(attribute.name) &&
           !/^(https?:|\\/dashboard\\/|#)/i.test(attribute.value.trim())))
        found.push(element)
  return found.map((element) => element.outerHTML.slice(0, 160))
})()`

describe.skipIf(executable === undefined)("the dashboard against hostile content", () => {
  let server: ServerProcess.ServerProcess
  let model: FakeOpenAi.FakeOpenAi
  let browser: Browser
  let page: Page
  let errors: ReturnType<typeof Browsers.watchErrors>
  let dataDir: string
  let ownerKey: string
  let phoneNumberId: string
  const dialogs: Array<string> = []
  const foreign: Array<string> = []
  const violations: Array<string> = []
  /** Each hostile lead with its conversation, in PAYLOADS order, then the long one, the links one and the agent's. */
  const seeded: Array<{ name: string; inbound: string; outbound: string; leadId: string; conversationId: string }> = []
  let agentThread: { leadId: string; conversationId: string }
  let agentId: string

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const reply = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const answer = { status: reply.status, body: (await reply.json()) as any }
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300)
    return answer
  }

  /** A customer writes in through the simulator (signed as Meta signs); resolves to the conversation. */
  const customerWrites = async (from: string, name: string, text: string) => {
    await api("POST", "/admin/v1/simulator/whatsapp/inbound", server.adminToken, {
      phone_number_id: phoneNumberId,
      from,
      name,
      text
    })
    const phone = `+${from}`
    const conversation = await until(
      async () =>
        (await api("GET", "/api/v1/conversations?limit=100", ownerKey)).body.conversations.find(
          (c: { lead: { phone: string } }) => c.lead.phone === phone
        ),
      (found) => found !== undefined,
      10_000
    )
    expect(conversation, `the conversation with ${phone}`).toBeDefined()
    return conversation as { id: string; lead_id: string }
  }

  /** Nothing ran, nothing left for another origin, nothing was refused, nothing was made. */
  const expectNothingRan = async () => {
    expect(dialogs.splice(0)).toEqual([])
    expect(foreign.splice(0)).toEqual([])
    expect(violations.splice(0)).toEqual([])
    expect(errors.take()).toEqual([])
    expect(await page.evaluate(INTRUDERS)).toEqual([])
    expect(await page.locator("script").count()).toBe(1)
  }

  /** Both widths' screenshots, after checking that nothing makes the phone layout scroll sideways. */
  const screenshots = async (name: string) => {
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await Browsers.overflowing(page), `${name} at 390 pixels`).toEqual([])
    await Browsers.screenshots(page, `hostile-${name}`)
  }

  const open = async (label: string) => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: label, exact: true }).click()
    await page.getByRole("heading", { level: 1, name: label }).waitFor()
  }

  beforeAll(async () => {
    dataDir = ServerProcess.tempDataDir()
    model = await FakeOpenAi.start()
    model.answer(() => FakeOpenAi.completion(AGENT_ANSWER))
    server = await ServerProcess.start({
      dataDir,
      env: {
        LEADLINE_AI_PROVIDER: "openai_compatible",
        LEADLINE_AI_BASE_URL: model.baseUrl,
        LEADLINE_AI_MODEL: "fake-model-1"
      }
    })
    ownerKey = (await api("POST", "/admin/v1/accounts", server.adminToken, { name: "Hostile Ltd" })).body.api_key
    phoneNumberId = (
      await api("POST", "/api/v1/channels", ownerKey, {
        type: "whatsapp",
        name: "Support line",
        phone_number_id: `${Date.now()}`,
        display_phone_number: "+1 650-555-1111",
        access_token: "EAAG-test-token"
      })
    ).body.phone_number_id

    // One customer per payload (its name and first message), answered by the team with it too.
    const people = [
      ...PAYLOADS.map((payload) => ({ name: payload, inbound: payload, outbound: `Re: ${payload}` })),
      { name: LONG_NAME, inbound: LONG_TEXT, outbound: LONG_TEXT },
      { name: "Link Sender", inbound: LINKS_TEXT, outbound: LINKS_TEXT }
    ]
    for (const [index, person] of people.entries()) {
      const conversation = await customerWrites(
        `14155551${String(index).padStart(3, "0")}`,
        person.name,
        person.inbound
      )
      await api("POST", `/api/v1/conversations/${conversation.id}/messages`, ownerKey, {
        type: "text",
        text: person.outbound
      })
      seeded.push({ ...person, leadId: conversation.lead_id, conversationId: conversation.id })
    }

    // The catalogue, an order naming a product and a custom line, knowledge sources and an agent.
    for (const [index, payload] of PAYLOADS.entries())
      await api("POST", "/api/v1/catalogue/products", ownerKey, {
        sku: `HOSTILE-${index}`,
        name: payload,
        description: payload,
        unit_amount: 100 + index,
        currency: "USD"
      })
    await api("POST", "/api/v1/orders", ownerKey, {
      lead_id: seeded[0]!.leadId,
      items: [
        { sku: "HOSTILE-1", quantity: 1 },
        { name: PAYLOADS[3], unit_amount: 250, quantity: 2 }
      ],
      note: PAYLOADS[0]
    })
    for (const payload of PAYLOADS)
      await api("POST", "/api/v1/knowledge/sources", ownerKey, {
        kind: "text",
        title: payload,
        content: `Delivery costs nothing. ${PAYLOADS.join("\n")}`
      })
    agentId = (await api("POST", "/api/v1/agents", ownerKey, { name: PAYLOADS[1], enabled: true })).body.id

    // The agent answers a new customer live, with the model's hostile answer, sent as a message.
    const asked = await customerWrites("14155552000", PAYLOADS[2], QUESTION)
    agentThread = { leadId: asked.lead_id, conversationId: asked.id }
    const answered = await until(
      async () =>
        (await api("GET", `/api/v1/conversations/${asked.id}/messages`, ownerKey)).body.messages.filter(
          (m: { sender_type: string }) => m.sender_type === "agent"
        ),
      (found) => found.length > 0,
      20_000
    )
    expect(answered.map((m: { text: string; sender_id: string }) => [m.text, m.sender_id])).toEqual([
      [AGENT_ANSWER, agentId]
    ])
    // The knowledge reached the model as it was written, in its delimited block.
    const prompt = model.requests()[0]!.body.messages[0].content as string
    expect(prompt).toContain(PAYLOADS.join("\n"))

    browser = await Browsers.launch(executable!)
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.setDefaultTimeout(10_000)
    errors = Browsers.watchErrors(page)
    page.on("dialog", (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`)
      void dialog.dismiss()
    })
    const origin = new URL(server.baseUrl).origin
    page.on("request", (request) => {
      if (new URL(request.url()).origin !== origin) foreign.push(request.url())
    })
    // Every refusal of the page's policy, reported from the page: an init script, which the policy
    // does not cover, listens before the page's own code runs.
    await page.exposeFunction("reportViolation", (text: string) => violations.push(text))
    await page.addInitScript(`document.addEventListener("securitypolicyviolation", (event) =>
      reportViolation(\`\${event.violatedDirective} \${event.blockedURI} (\${event.sourceFile}:\${event.lineNumber})\`))`)

    // The built page comes with the strict policy: no inline script or style, nothing from elsewhere.
    const served = await page.goto(`${server.baseUrl}/dashboard/`)
    expect(served?.headers()["content-security-policy"]).toBe(
      "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    )
    await page.getByLabel("API key", { exact: true }).fill(ownerKey)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
  }, 180_000)

  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page !== undefined)
      console.log(`screenshot of the failure: ${await Browsers.failure(page, context.task.name)}`)
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await model?.close()
    ServerProcess.removeDir(dataDir)
  })

  it("lists every conversation with its hostile name and last message as text", async () => {
    await open("Conversations")
    const rows = page.locator(".conversation-row")
    await rows.nth(seeded.length).waitFor()
    const texts = await rows.allTextContents()
    for (const person of seeded) {
      const row = texts.find((text) => text.includes(`You: ${preview(person.outbound)}`))
      expect(row, person.outbound).toBeDefined()
      expect(row).toContain(person.name)
    }
    expect(texts.find((text) => text.includes(`You: ${preview(AGENT_ANSWER)}`))).toContain(PAYLOADS[2])
    await screenshots("conversations")
    await expectNothingRan()
  })

  it("shows each thread's name and messages verbatim", async () => {
    for (const person of seeded) {
      await page.goto(`${server.baseUrl}/dashboard/conversations?open=${person.conversationId}`)
      const thread = page.getByRole("region", { name: "Conversation", exact: true })
      await thread.locator(".bubble.outbound .text").waitFor()
      await page.locator(".conversation-row").nth(seeded.length).waitFor()
      expect(await thread.getByRole("heading", { level: 2 }).textContent()).toBe(person.name)
      expect(await thread.locator(".bubble.inbound .text").textContent()).toBe(person.inbound)
      expect(await thread.locator(".bubble.outbound .text").textContent()).toBe(person.outbound)
      if (person.name === PAYLOADS[0]) await screenshots("thread")
      if (person.name === LONG_NAME) await screenshots("thread-long")
      await expectNothingRan()
    }
  })

  it("links only the http(s) addresses of a message, each to a new tab without opener or referrer", async () => {
    const links = seeded.find((person) => person.name === "Link Sender")!
    await page.goto(`${server.baseUrl}/dashboard/conversations?open=${links.conversationId}`)
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    for (const side of ["inbound", "outbound"]) {
      const text = thread.locator(`.bubble.${side} .text`)
      await text.waitFor()
      expect(await text.textContent()).toBe(LINKS_TEXT)
      const anchors = await text
        .locator("a")
        .evaluateAll((all) =>
          all.map((a) => [a.getAttribute("href"), a.textContent, a.getAttribute("rel"), a.getAttribute("target")])
        )
      expect(anchors).toEqual(LINKS.map((href) => [href, href, "noopener noreferrer", "_blank"]))
    }
    await screenshots("thread-links")
    await expectNothingRan()
  })

  it("shows the agent's hostile answer as text, its https address alone a link", async () => {
    await page.goto(`${server.baseUrl}/dashboard/conversations?open=${agentThread.conversationId}`)
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    const answer = thread.locator(".bubble.outbound").filter({ hasText: "agent ·" }).locator(".text")
    await answer.waitFor()
    expect(await thread.getByRole("heading", { level: 2 }).textContent()).toBe(PAYLOADS[2])
    expect(await thread.locator(".bubble.inbound .text").textContent()).toBe(QUESTION)
    expect(await answer.textContent()).toBe(AGENT_ANSWER)
    expect(await answer.locator("a").evaluateAll((all) => all.map((a) => a.getAttribute("href")))).toEqual([
      "https://example.net/terms"
    ])
    await screenshots("thread-agent")
    await expectNothingRan()
  })

  it("shows a hostile lead's page, and its name in the edit form, verbatim", async () => {
    const sampled = [PAYLOADS[0], PAYLOADS[3], PAYLOADS[11], PAYLOADS[18], LONG_NAME]
    for (const person of seeded.filter((p) => sampled.includes(p.name))) {
      await page.goto(`${server.baseUrl}/dashboard/leads/${person.leadId}`)
      await page.getByRole("table", { name: "The lead's conversations" }).waitFor()
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(person.name)
      expect(await page.title()).toBe(`${person.name} · Leadline`)
      const last = page
        .getByRole("table", { name: "The lead's conversations" })
        .locator("td[data-label='Last message']")
      expect(await last.textContent()).toBe(preview(person.outbound))
      await page
        .getByRole("table", { name: "The lead's orders" })
        .or(page.getByText("No orders from this lead."))
        .waitFor()
      if (person.name === PAYLOADS[0]) await screenshots("lead")
      if (person.name === LONG_NAME) await screenshots("lead-long")
      await expectNothingRan()
    }
    await open("Leads")
    // The list loads after the page opens: read its names once its rows are there.
    const cells = page.getByRole("table", { name: "Leads" }).locator("td[data-label=Name]")
    await cells.first().waitFor()
    const names = await cells.allTextContents()
    expect(names).toEqual(expect.arrayContaining([...PAYLOADS, LONG_NAME]))
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: PAYLOADS[11], exact: true }) })
    await row.getByRole("button", { name: "Edit" }).click()
    expect(await page.getByRole("form", { name: "Edit lead" }).getByLabel("Name").inputValue()).toBe(PAYLOADS[11])
    await screenshots("leads")
    await page.getByRole("button", { name: "Cancel" }).click()
    await expectNothingRan()
  })

  it("shows hostile product names, and the orders holding them", async () => {
    await open("Products")
    await page.getByRole("table", { name: "Products" }).waitFor()
    const names = await page.locator("td[data-label=Name]").allTextContents()
    expect([...names].sort()).toEqual([...PAYLOADS].sort())
    await screenshots("products")
    await expectNothingRan()
    await open("Orders")
    await page.getByRole("table", { name: "Orders" }).getByText("$6.01").waitFor()
    await screenshots("orders")
    await expectNothingRan()
  })

  it("shows hostile knowledge titles, and an agent's hostile name and simulated answer", async () => {
    await open("Knowledge")
    await page.getByRole("table", { name: "Knowledge sources" }).waitFor()
    const titles = await page.locator("td[data-label=Title]").allTextContents()
    expect([...titles].sort()).toEqual([...PAYLOADS].sort())
    await screenshots("knowledge")
    await expectNothingRan()

    await open("Agents")
    await page.getByRole("table", { name: "Agents" }).waitFor()
    expect(await page.locator("td[data-label=Name]").allTextContents()).toEqual([PAYLOADS[1]])
    const simulate = page.getByRole("form", { name: "Simulate" })
    expect(await simulate.getByLabel("Agent").locator("option:checked").textContent()).toBe(PAYLOADS[1])
    await simulate.getByLabel("Customer message").fill(QUESTION)
    await simulate.getByRole("button", { name: "Simulate" }).click()
    const reply = page.getByRole("status", { name: "Simulated reply" })
    await reply.waitFor()
    expect(await reply.locator("p").textContent()).toBe(AGENT_ANSWER)
    // "answer · from" the titles of the sources it quoted (each a payload), as the API names them.
    const simulated = await api("POST", "/api/v1/ai/simulate", ownerKey, { agent_id: agentId, message: QUESTION })
    const sources = [
      ...new Set(simulated.body.snippets.map((snippet: { source_title: string }) => snippet.source_title))
    ]
    expect(sources.length).toBeGreaterThan(0)
    expect(PAYLOADS).toEqual(expect.arrayContaining(sources))
    expect(await reply.locator("small").textContent()).toBe(`answer · from ${sources.join(", ")}`)
    await screenshots("agents")
    await expectNothingRan()
  })
})
