import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import * as MockReceiver from "@leadline/testkit/MockReceiver"
import * as InboundMedia from "@leadline/testkit/conversations/InboundMedia"
import * as MetaSignature from "@leadline/whatsapp-adapter/meta/MetaSignature"
import * as Browsers from "./support/Browser.ts"
import * as ServerProcess from "./support/ServerProcess.ts"
import { until } from "./support/Until.ts"

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the real
 * reference server on a random port, as issue 16's acceptance has it: every page at 1280 and
 * 390 pixels, no console error anywhere.
 */
const executable = Browsers.chromiumPath()
/** The app secret the server checks WhatsApp's webhooks with: the test signs a customer's files. */
const APP_SECRET = "browser-test-app-secret"
if (executable === undefined) {
  if (process.env.CI === "true") throw new Error(`${Browsers.MISSING} (CI must have it)`)
  console.warn(`dashboard browser tests NOT RUN: ${Browsers.MISSING}`)
}

describe.skipIf(executable === undefined)("the dashboard in a browser", () => {
  let server: ServerProcess.ServerProcess
  let receiver: MockReceiver.MockReceiver
  let browser: Browser
  let page: Page
  let errors: ReturnType<typeof Browsers.watchErrors>
  let ownerKey: string
  let accountId: string
  let dataDir: string
  let phoneNumberId: string

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const reply = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: reply.status, body: (await reply.json()) as any }
  }

  const open = async (label: string) => {
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: label, exact: true }).click()
    await page.getByRole("heading", { level: 1, name: label === "Overview" ? "Overview" : label }).waitFor()
    expect(await Browsers.unlabelledControls(page)).toEqual([])
  }

  const signIn = async (kind: "Account owner" | "Operator", token: string) => {
    await page.goto(`${server.baseUrl}/dashboard/`)
    await page.getByRole("radio", { name: new RegExp(`^${kind}`) }).check()
    await page.getByLabel(kind === "Operator" ? "Admin token" : "API key", { exact: true }).fill(token)
    expect(await Browsers.unlabelledControls(page)).toEqual([])
    await page.getByRole("button", { name: "Sign in" }).click()
  }

  beforeAll(async () => {
    dataDir = ServerProcess.tempDataDir()
    receiver = await MockReceiver.start()
    server = await ServerProcess.start({
      dataDir,
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WHATSAPP_APP_SECRET: APP_SECRET }
    })
    const account = await api("POST", "/admin/v1/accounts", server.adminToken, { name: "Browser Ltd" })
    expect(account.status).toBe(201)
    ownerKey = account.body.api_key
    accountId = account.body.account_id
    browser = await Browsers.launch(executable!)
    // A zone other than the server's UTC, so the analytics page shows that it uses the browser's.
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, timezoneId: "America/Sao_Paulo" })
    page.setDefaultTimeout(10_000)
    errors = Browsers.watchErrors(page)
  }, 90_000)

  // A failed step leaves a full-page screenshot beside the others, named after the test.
  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && page !== undefined)
      console.log(`screenshot of the failure: ${await Browsers.failure(page, context.task.name)}`)
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await receiver?.close()
    ServerProcess.removeDir(dataDir)
  })

  it("shows the API's own error for a wrong key, and keeps nothing", async () => {
    await signIn("Account owner", "lk_not_a_real_key")
    await expect(page.getByRole("alert").textContent()).resolves.toBe("Invalid or missing API key")
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await Browsers.screenshots(page, "sign-in-refused")
    // The one error the browser logs is the refused request itself.
    expect(errors.take()).toEqual([
      expect.stringContaining("Failed to load resource: the server responded with a status of 401")
    ])
  })

  it("signs in with the owner's key, never putting it in the URL, and shows the usage", async () => {
    await signIn("Account owner", ownerKey)
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/`)
    expect(page.url()).not.toContain(ownerKey)
    await expect(page.getByTestId("messages-used").textContent()).resolves.toBe("0")
    await expect(page.getByTestId("messages-limit").textContent()).resolves.toBe("1000")
    await Browsers.screenshots(page, "overview")
    expect(errors.take()).toEqual([])
  })

  it("issues a scoped key whose /api/me reports its scopes, changes them, and revokes it", async () => {
    await open("API keys")
    const issue = page.getByRole("form", { name: "Issue a key" })
    if (!(await issue.isVisible())) await page.getByText("Issue a key", { exact: true }).click()
    await issue.getByLabel("Name").fill("reporting")
    await issue.getByRole("checkbox", { name: /^leads:read/ }).check()
    await issue.getByRole("checkbox", { name: /^analytics:read/ }).check()
    await issue.getByRole("button", { name: "Issue key" }).click()
    const secret = (await page.getByRole("region", { name: "The new API key" }).locator("code").textContent())!
    expect(secret).toMatch(/^lk_/)
    expect((await api("GET", "/api/me", secret)).body.scopes).toEqual(["leads:read", "analytics:read"])
    await Browsers.screenshots(page, "keys")
    await page.getByRole("button", { name: "Done" }).click()

    const row = page.getByRole("row").filter({ hasText: "reporting" })
    await row.getByRole("button", { name: "Edit scopes" }).click()
    await row.getByRole("checkbox", { name: /^analytics:read/ }).uncheck()
    await row.getByRole("checkbox", { name: /^orders:read/ }).check()
    await row.getByRole("button", { name: "Save scopes" }).click()
    await page.getByRole("row").filter({ hasText: "reporting" }).getByText("leads:read, orders:read").waitFor()
    expect((await api("GET", "/api/me", secret)).body.scopes).toEqual(["leads:read", "orders:read"])

    await page.getByRole("row").filter({ hasText: "reporting" }).getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("alertdialog").getByRole("button", { name: "Revoke", exact: true }).click()
    await page
      .getByRole("row")
      .filter({ hasText: "reporting" })
      .getByText(/^revoked/)
      .waitFor()
    expect((await api("GET", "/api/me", secret)).status).toBe(401)
    expect(errors.take()).toEqual([])
  })

  it("asks before the signed-in key revokes itself, and cancelling keeps it", async () => {
    const own = page.getByRole("row").filter({ hasText: "active (this session)" })
    await own.getByRole("button", { name: "Revoke" }).click()
    const dialog = page.getByRole("alertdialog")
    await expect(dialog.textContent()).resolves.toContain("This is the key you are signed in with")
    await Browsers.screenshots(page, "keys-revoke-self")
    await dialog.getByRole("button", { name: "Cancel" }).click()
    expect((await api("GET", "/api/me", ownerKey)).status).toBe(200)
    expect(errors.take()).toEqual([])
  })

  it("registers an endpoint, shows the delivery of a new lead, and redelivers it", async () => {
    const endpoint = receiver.endpoint("/dashboard-hook")
    await open("Webhooks")
    await page.getByRole("textbox", { name: "URL" }).fill(endpoint.url)
    await page.getByRole("button", { name: "Register" }).click()
    const secret = (await page
      .getByRole("region", { name: "The endpoint's signing secret" })
      .locator("code")
      .textContent())!
    expect(secret).toMatch(/^whsec_/)
    endpoint.setSecret(secret)
    await page.getByRole("button", { name: "Done" }).click()

    const lead = await api("POST", "/api/v1/leads", ownerKey, { name: "Hooked", phone: "+14155550101" })
    expect(lead.status).toBe(201)
    await endpoint.waitFor(1)
    const delivered = page.getByRole("row").filter({ hasText: "lead.created" }).filter({ hasText: "delivered" })
    expect(
      await until(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click()
          return delivered.count()
        },
        (count) => count === 1,
        15_000
      )
    ).toBe(1)
    await Browsers.screenshots(page, "webhooks")
    await delivered.getByRole("button", { name: "Redeliver" }).click()
    const requests = await endpoint.waitFor(2)
    expect(requests.map((request) => JSON.parse(request.body).data.id)).toEqual([lead.body.id, lead.body.id])
    expect(requests.every((request) => request.verified.service && request.verified.standard)).toBe(true)
    expect(
      await until(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click()
          return page.getByRole("row").filter({ hasText: "lead.created" }).getByText("2 attempts").count()
        },
        (count) => count === 1,
        15_000
      )
    ).toBe(1)
    expect(errors.take()).toEqual([])
  })

  it("pages through 120 leads", async () => {
    // One lead exists already (the webhook test's); 119 more through the API.
    for (let start = 0; start < 119; start += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, 119 - start) }, (_, i) =>
          api("POST", "/api/v1/leads", ownerKey, { name: `Lead ${start + i}`, phone: `+55119888${10000 + start + i}` })
        )
      )
    await open("Leads")
    const status = page.getByRole("navigation", { name: "Pages of leads" }).getByRole("status")
    await expect(status.textContent()).resolves.toBe("1–50 of 120 leads")
    expect(await page.getByRole("row").count()).toBe(51)
    await Browsers.screenshots(page, "leads")
    await page.getByRole("button", { name: "Next" }).click()
    await status.filter({ hasText: "51–100 of 120 leads" }).waitFor()
    await page.getByRole("button", { name: "Next" }).click()
    await status.filter({ hasText: "101–120 of 120 leads" }).waitFor()
    expect(await page.getByRole("row").count()).toBe(21)
    expect(await page.getByRole("button", { name: "Next" }).isDisabled()).toBe(true)
    expect(errors.take()).toEqual([])
  })

  it("edits a lead and deletes one, after asking", async () => {
    // Back to the first page: another page and back mounts the list afresh.
    await open("Overview")
    await open("Leads")
    const newestName = (await api("GET", "/api/v1/leads?limit=1", ownerKey)).body.leads[0].name
    const newest = page.getByRole("row").filter({ has: page.getByRole("cell", { name: newestName, exact: true }) })
    await newest.getByRole("button", { name: "Edit" }).click()
    const form = page.getByRole("form", { name: "Edit lead" })
    await form.getByLabel("Name").fill("Lead renamed")
    await form.getByLabel("Tags").fill("vip, newsletter")
    await form.getByRole("button", { name: "Save lead" }).click()
    const renamed = page.getByRole("row").filter({ hasText: "Lead renamed" })
    await renamed.getByText("vip, newsletter").waitFor()
    const listed = (await api("GET", "/api/v1/leads?limit=1", ownerKey)).body.leads[0]
    expect([listed.name, listed.tags]).toEqual(["Lead renamed", ["vip", "newsletter"]])

    page.once("dialog", (dialog) => void dialog.accept())
    await renamed.getByRole("button", { name: "Delete" }).click()
    const status = page.getByRole("navigation", { name: "Pages of leads" }).getByRole("status")
    await status.filter({ hasText: "1–50 of 119 leads" }).waitFor()
    expect((await api("GET", `/api/v1/leads/${listed.id}`, ownerKey)).status).toBe(404)
    expect(errors.take()).toEqual([])
  })

  it("shows every other page, with its empty state", async () => {
    for (const [label, empty] of [
      ["Conversations", "No conversations yet"],
      ["Campaigns", "No campaigns yet"],
      ["Orders", "No orders yet"],
      ["Products", "No products yet"],
      ["Knowledge", "No knowledge sources yet"],
      ["Agents", "No agents yet"]
    ] as const) {
      await open(label)
      await page.getByText(empty).waitFor()
      await Browsers.screenshots(page, label.toLowerCase())
    }
    expect(errors.take()).toEqual([])
  })

  it("turns the order status notices on from the Orders page", async () => {
    await open("Orders")
    await page.getByText("Status notices to leads", { exact: true }).click()
    const state = page.getByRole("status", { name: "Status notices" })
    await state.filter({ hasText: "Off" }).waitFor()
    const form = page.getByRole("form", { name: "Status notices to leads" })
    await form.getByRole("checkbox", { name: /^Message the lead/ }).check()
    await form.getByLabel("Template name").fill("order_update")
    await form.getByLabel("Template language").fill("pt_BR")
    await form.getByRole("button", { name: "Save notices" }).click()
    await state.filter({ hasText: "On: template order_update (pt_BR)" }).waitFor()
    expect((await api("GET", "/api/v1/settings/order-notifications", ownerKey)).body).toEqual({
      enabled: true,
      template: { name: "order_update", language: "pt_BR" }
    })
    await Browsers.screenshots(page, "orders-notices")
    expect(errors.take()).toEqual([])
  })

  it("adds a product, a knowledge source and an agent, and simulates the agent's answer", async () => {
    await open("Products")
    await page.getByText("Add a product", { exact: true }).click()
    const product = page.getByRole("form", { name: "Add a product" })
    await product.getByLabel("SKU").fill("MUG-BLUE")
    await product.getByLabel("Name", { exact: true }).fill("Blue mug")
    await product.getByLabel("Price in minor units").fill("1999")
    await product.getByLabel("Stock").fill("12")
    await product.getByRole("button", { name: "Add product" }).click()
    const row = page.getByRole("row").filter({ hasText: "MUG-BLUE" })
    await row.getByText("$19.99").waitFor()
    await row.getByText("12", { exact: true }).waitFor()

    await open("Knowledge")
    await page.getByText("Add a text source", { exact: true }).click()
    const source = page.getByRole("form", { name: "Add a text source" })
    await source.getByLabel("Title").fill("Delivery")
    await source
      .getByLabel("Content")
      .fill("Delivery costs 5 dollars anywhere in the city, and is free above 50 dollars.")
    await source.getByRole("button", { name: "Add source" }).click()
    await page.getByRole("row").filter({ hasText: "Delivery" }).getByText("ready").waitFor()

    await open("Agents")
    await page.getByText("Add an agent", { exact: true }).click()
    await page.getByRole("form", { name: "Add an agent" }).getByLabel("Name").fill("Helper")
    await page.getByRole("button", { name: "Add agent" }).click()
    await page.getByRole("row").filter({ hasText: "Helper" }).getByText("all sources").waitFor()
    const simulate = page.getByRole("form", { name: "Simulate" })
    expect(await simulate.getByLabel("Agent").locator("option:checked").textContent()).toBe("Helper")
    await simulate.getByLabel("Customer message").fill("How much does delivery cost?")
    await simulate.getByRole("button", { name: "Simulate" }).click()
    const reply = page.getByRole("status", { name: "Simulated reply" })
    await reply.getByText("answer · from Delivery").waitFor()
    expect(await reply.locator("p").textContent()).toContain("Delivery costs 5 dollars")
    await Browsers.screenshots(page, "agents-simulation")
    expect(errors.take()).toEqual([])
  })

  it("shows a customer's message in the inbox with the lead's name, and sends the reply typed in it", async () => {
    const channel = await api("POST", "/api/v1/channels", ownerKey, {
      type: "whatsapp",
      name: "Support line",
      phone_number_id: `${Date.now()}`,
      display_phone_number: "+1 650-555-1111",
      access_token: "EAAG-test-token"
    })
    expect(channel.status).toBe(201)
    phoneNumberId = channel.body.phone_number_id
    await open("Conversations")
    await page.getByText("No conversations yet").waitFor()
    const inbound = await api("POST", "/admin/v1/simulator/whatsapp/inbound", server.adminToken, {
      phone_number_id: phoneNumberId,
      from: "14155550142",
      name: "Grace Hopper",
      text: "Is the blue one in stock?"
    })
    expect(inbound.status).toBe(202)
    // No reload and no Refresh: the account's event stream moves the open inbox, within 2 seconds.
    const row = page.getByRole("button", { name: /Grace Hopper/ })
    await row.waitFor({ timeout: 2_000 })
    await expect(row.textContent()).resolves.toMatch(
      /Grace Hopper.*\+14155550142.*Is the blue one in stock\?.*open.*1 unread/
    )
    await Browsers.screenshots(page, "conversations")
    await row.click()
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    await thread.getByRole("heading", { name: "Grace Hopper" }).waitFor()
    await thread.getByText("Is the blue one in stock?").waitFor()
    // Opening it marked it read: the row's count is gone.
    await row.filter({ hasNotText: "unread" }).waitFor()
    await thread.getByRole("textbox", { name: "Reply" }).fill("Yes, in every size.")
    await thread.getByRole("button", { name: "Send" }).click()
    await thread.locator(".bubble.outbound").getByText("Yes, in every size.").waitFor()
    await thread.locator(".bubble.outbound .ticks").first().waitFor()
    await row.getByText("You: Yes, in every size.").waitFor()
    const conversations = (await api("GET", "/api/v1/conversations", ownerKey)).body.conversations
    expect(conversations[0]).toMatchObject({ lead: { name: "Grace Hopper" }, unread_count: 0 })
    const messages = (await api("GET", `/api/v1/conversations/${conversations[0].id}/messages`, ownerKey)).body.messages
    expect(
      messages.map((message: { direction: string; text: string }) => [message.direction, message.text]).sort()
    ).toEqual([
      ["inbound", "Is the blue one in stock?"],
      ["outbound", "Yes, in every size."]
    ])
    await Browsers.screenshots(page, "conversation")
    expect(errors.take()).toEqual([])
  })

  it("assigns and resolves from the thread, and the filtered list follows", async () => {
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    const row = page.getByRole("button", { name: /Grace Hopper/ })
    await thread.getByRole("button", { name: "Assign to me" }).click()
    await row.getByText("assigned to me").waitFor()
    await thread.getByRole("button", { name: "Unassign" }).waitFor()
    await thread.getByRole("button", { name: "Resolve" }).click()
    await row.getByText("resolved", { exact: true }).waitFor()
    await thread.getByRole("button", { name: "Reopen" }).waitFor()
    const conversation = (await api("GET", "/api/v1/conversations", ownerKey)).body.conversations[0]
    expect(conversation).toMatchObject({ status: "resolved", assigned_user_id: expect.any(String) })
    await page.getByLabel("Status").selectOption("open")
    await page.getByText("No conversations match these filters.").waitFor()
    await page.getByLabel("Status").selectOption("resolved")
    await page.getByLabel("Assignee").selectOption("Me")
    await row.waitFor()
    await page.getByLabel("Assignee").selectOption("Unassigned")
    await page.getByText("No conversations match these filters.").waitFor()
    await page.getByLabel("Assignee").selectOption("Anyone")
    await page.getByLabel("Status").selectOption("all")
    await thread.getByRole("button", { name: "Reopen" }).click()
    await row.getByText("open", { exact: true }).waitFor()
    expect(await Browsers.unlabelledControls(page)).toEqual([])
    await Browsers.screenshots(page, "conversation-actions")
    expect(errors.take()).toEqual([])
  })

  it("assigns a conversation to a teammate by name, and filters the list by that teammate", async () => {
    // A second user of the account, made by the operator; the inbox lists the account's users on opening.
    const member = await api("POST", `/admin/v1/accounts/${accountId}/users`, server.adminToken, { role: "member" })
    expect(member.status).toBe(201)
    const memberId: string = member.body.user_id
    const memberName = `Member ${memberId.slice(0, 8)}`
    await open("Overview")
    await open("Conversations")
    const row = page.getByRole("button", { name: /Grace Hopper/ })
    await row.click()
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    await thread.getByRole("heading", { name: "Grace Hopper" }).waitFor()
    const assign = thread.getByRole("form", { name: "Assign" })
    // The teammates offered are the account's users: the signed-in owner as "Me", then the member.
    expect(await assign.getByLabel("Assign to").locator("option").allTextContents()).toEqual([
      "No one",
      "Me",
      memberName
    ])
    await assign.getByLabel("Assign to").selectOption({ label: memberName })
    await assign.getByRole("button", { name: "Assign" }).click()
    await row.getByText(`assigned to ${memberName}`).waitFor()
    await thread.getByText(`assigned to ${memberName}`).waitFor()
    const conversationId = (await api("GET", "/api/v1/conversations", ownerKey)).body.conversations.find(
      (c: { lead: { name: string } }) => c.lead.name === "Grace Hopper"
    ).id
    expect((await api("GET", `/api/v1/conversations/${conversationId}`, ownerKey)).body.assigned_user_id).toBe(memberId)
    // The list filtered by that teammate shows it, by the signed-in user does not.
    await page.getByLabel("Assignee").selectOption({ label: memberName })
    await row.waitFor()
    expect(await page.getByRole("list", { name: "Conversations" }).getByRole("listitem").count()).toBe(1)
    await page.getByLabel("Assignee").selectOption("Me")
    await page.getByText("No conversations match these filters.").waitFor()
    await page.getByLabel("Assignee").selectOption({ label: memberName })
    await row.waitFor()
    expect(await Browsers.unlabelledControls(page)).toEqual([])
    await Browsers.screenshots(page, "conversation-assigned")
    // Taken back by the signed-in user, the filter by the teammate empties as the list follows.
    await thread.getByRole("button", { name: "Assign to me" }).click()
    await page.getByText("No conversations match these filters.").waitFor()
    expect((await api("GET", `/api/v1/conversations/${conversationId}`, ownerKey)).body.assigned_user_id).toBe(
      (await api("GET", "/api/me", ownerKey)).body.account.user_id
    )
    await page.getByLabel("Assignee").selectOption("Anyone")
    await row.waitFor()
    expect(errors.take()).toEqual([])
  })

  it("loads a long thread's older messages above, keeping the place, and still hears new ones", async () => {
    const customer = "14155550177"
    const say = async (text: string) => {
      const inbound = await api("POST", "/admin/v1/simulator/whatsapp/inbound", server.adminToken, {
        phone_number_id: phoneNumberId,
        from: customer,
        name: "Long Talker",
        text
      })
      expect(inbound.status).toBe(202)
    }
    for (let n = 1; n <= 60; n++) await say(`Message ${n}`)
    const conversationOf = async () =>
      (await api("GET", "/api/v1/conversations", ownerKey)).body.conversations.find(
        (c: { lead: { name: string } }) => c.lead.name === "Long Talker"
      )
    const conversation = await until(conversationOf, (found) => found !== undefined, 15_000)
    const messagesPath = `/api/v1/conversations/${conversation.id}/messages`
    const first = await until(
      () => api("GET", messagesPath, ownerKey),
      (reply) => reply.body.meta.total === 60,
      15_000
    )
    expect(first.body.meta.total).toBe(60)
    const texts = (reply: { body: { messages: ReadonlyArray<{ text: string }> } }) =>
      reply.body.messages.map((message) => message.text)
    // What the newest page holds, and what only the page before it does (newest first, as the API lists).
    const newest = texts(first)
    const oldestShown = newest[newest.length - 1]!
    const older = texts(await api("GET", `${messagesPath}?before=${first.body.messages[49].id}`, ownerKey))
    expect(older).toHaveLength(10)
    expect([...newest, ...older].sort()).toEqual(Array.from({ length: 60 }, (_, i) => `Message ${i + 1}`).sort())

    await page.getByRole("button", { name: /Long Talker/ }).click()
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    await thread.getByRole("heading", { name: "Long Talker" }).waitFor()
    const bubbles = thread.getByRole("list", { name: "Messages" }).getByRole("listitem")
    await bubbles.nth(49).waitFor()
    expect(await bubbles.count()).toBe(50)
    await thread.getByText("50 of 60 shown").waitFor()
    expect(await thread.getByText(older[0]!, { exact: true }).count()).toBe(0)
    // Opened at the newest message.
    const box = thread.locator(".thread-scroll")
    const gap = () => box.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)
    await expect.poll(gap).toBeLessThan(2)
    await Browsers.screenshots(page, "conversation-long")

    // At the top, the oldest message shown is where the reader left it once the older ones come in above.
    await box.evaluate((element) => {
      element.scrollTop = 0
    })
    const topOf = (text: string) =>
      thread
        .getByText(text, { exact: true })
        .evaluate(
          (element) =>
            element.getBoundingClientRect().top - element.closest(".thread-scroll")!.getBoundingClientRect().top
        )
    const before = await topOf(oldestShown)
    await thread.getByRole("button", { name: "Load older messages" }).click()
    await thread.getByText("The start of the conversation.").waitFor()
    expect(await bubbles.count()).toBe(60)
    expect(await bubbles.first().textContent()).toContain(older[older.length - 1])
    expect(Math.abs((await topOf(oldestShown)) - before)).toBeLessThan(2)
    expect(await box.evaluate((element) => element.scrollTop)).toBeGreaterThan(0)
    expect(await thread.getByRole("button", { name: "Load older messages" }).count()).toBe(0)
    await Browsers.screenshots(page, "conversation-older")

    // A new message arrives below by the stream, and the older ones stay.
    await say("Message 61")
    await thread.getByText("Message 61", { exact: true }).waitFor({ timeout: 2_000 })
    expect(await bubbles.count()).toBe(61)
    await thread.getByText(older[older.length - 1]!, { exact: true }).waitFor()
    await thread.getByText("The start of the conversation.").waitFor()
    expect(errors.take()).toEqual([])
  })

  it("shows an image inline, a file as a link, and the template picker once the window has closed", async () => {
    // A customer sends a picture and a PDF (the simulator serves a PNG for a `png…` media id).
    for (const file of [
      { type: "image", mediaId: `png-${crypto.randomUUID()}`, mimeType: "image/png" },
      { type: "document", mediaId: `sim-${crypto.randomUUID()}`, mimeType: "application/pdf", filename: "quote.pdf" }
    ] as const) {
      const raw = InboundMedia.inboundFilePayload(phoneNumberId, "14155550143", file)
      const posted = await fetch(`${server.baseUrl}/webhooks/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": MetaSignature.sign(APP_SECRET, raw) },
        body: raw
      })
      expect(posted.status).toBe(200)
    }
    await page.getByRole("button", { name: "Refresh" }).click()
    await page.getByRole("button", { name: /Ada Customer/ }).click()
    const files = page.getByRole("region", { name: "Conversation", exact: true })
    await files.getByRole("heading", { name: "Ada Customer" }).waitFor()
    await files.getByRole("button", { name: /quote\.pdf/ }).waitFor()
    const image = files.getByRole("img", { name: "Image" })
    await image.waitFor()
    // Drawn: the canvas took the picture's size (the page's policy admits no evaluated string, so a function).
    await expect
      .poll(() => image.evaluate((canvas) => (canvas as unknown as { width: number }).width))
      .toBeGreaterThan(1)
    await Browsers.screenshots(page, "conversation-files")
    const lead = await api("POST", "/api/v1/leads", ownerKey, { name: "Cold Lead", phone: "+14155550144" })
    const sent = await api("POST", "/api/v1/messages", ownerKey, {
      type: "template",
      template: { name: "hello_world", language: "en_US" },
      lead_id: lead.body.id,
      channel_id: (await api("GET", "/api/v1/channels", ownerKey)).body.channels[0].id
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)
    await page.getByRole("button", { name: "Refresh" }).click()
    await page.getByRole("button", { name: /Cold Lead/ }).click()
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    await thread.getByRole("heading", { name: "Cold Lead" }).waitFor()
    const picker = thread.getByRole("form", { name: "Send a template" })
    await picker.getByLabel("Template name").waitFor()
    await picker.getByRole("button", { name: "Send template" }).click()
    await thread.locator(".bubble.outbound").nth(1).waitFor()
    await Browsers.screenshots(page, "conversation-template")
    expect(errors.take()).toEqual([])
  })

  it("gathers a lead's details, conversations and orders on its page", async () => {
    const leadId = (await api("GET", "/api/v1/conversations", ownerKey)).body.conversations.find(
      (c: { lead: { name: string } }) => c.lead.name === "Grace Hopper"
    ).lead.id
    const order = await api("POST", "/api/v1/orders", ownerKey, {
      lead_id: leadId,
      items: [{ sku: "MUG-BLUE", quantity: 2 }]
    })
    expect(order.status, JSON.stringify(order.body)).toBe(201)
    const thread = page.getByRole("region", { name: "Conversation", exact: true })
    await page.getByRole("button", { name: /Grace Hopper/ }).click()
    await thread.getByRole("link", { name: "Lead details" }).click()
    await page.getByRole("heading", { level: 1, name: "Grace Hopper" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/leads/${leadId}`)
    await page.getByText("+14155550142").waitFor()
    await page.getByRole("table", { name: "The lead's conversations" }).getByText("Yes, in every size.").waitFor()
    await page.getByRole("table", { name: "The lead's orders" }).getByText("$39.98").waitFor()
    expect(await Browsers.unlabelledControls(page)).toEqual([])
    await Browsers.screenshots(page, "lead")
    // A deep link loads the same page; its conversation opens in the inbox.
    await page.goto(`${server.baseUrl}/dashboard/leads/${leadId}`)
    await page.getByRole("heading", { level: 1, name: "Grace Hopper" }).waitFor()
    await page.getByRole("link", { name: "Open in the inbox" }).click()
    await page
      .getByRole("region", { name: "Conversation", exact: true })
      .getByRole("heading", { name: "Grace Hopper" })
      .waitFor()
    expect(errors.take()).toEqual([])
  })

  it("shows the analytics as cards and a chart a metric, in the browser's time zone", async () => {
    await open("Analytics")
    await page.getByText("America/Sao_Paulo").waitFor()
    const leads = page.getByRole("region", { name: "Leads" })
    await leads.getByText("Created", { exact: true }).waitFor()
    const messages = page.getByRole("region", { name: "Messages" })
    await messages.getByText("Inbound", { exact: true }).waitFor()
    await page.getByRole("img", { name: "Leads created by day" }).waitFor()
    await page.getByRole("img", { name: "Messages inbound by day" }).waitFor()
    expect(await page.locator(".chart").count()).toBeGreaterThan(3)
    expect(await page.locator(".bar").count()).toBeGreaterThan(0)
    await Browsers.screenshots(page, "analytics")
    expect(errors.take()).toEqual([])
  })

  it("lets the operator create an account and change its plan", async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    await signIn("Operator", server.adminToken)
    await page.getByRole("heading", { level: 1, name: "Accounts" }).waitFor()
    expect(page.url()).not.toContain(server.adminToken)
    const create = page.getByRole("form", { name: "Create an account" })
    if (!(await create.isVisible())) await page.getByText("Create an account", { exact: true }).click()
    await create.getByLabel("Account name").fill("Operator Made Ltd")
    await create.getByRole("button", { name: "Create account" }).click()
    const key = (await page.getByRole("region", { name: "The new account's owner key" }).locator("code").textContent())!
    expect((await api("GET", "/api/me", key)).body.scopes).toEqual([])
    await page.getByRole("region", { name: "Account" }).getByRole("heading", { name: "Operator Made Ltd" }).waitFor()
    await Browsers.screenshots(page, "operator-accounts")

    const detail = page.getByRole("region", { name: "Account" })
    await detail.getByLabel("New plan").selectOption("pro")
    await detail.getByRole("button", { name: "Change plan" }).click()
    await detail.getByTestId("account-plan").filter({ hasText: "pro" }).waitFor()
    expect((await api("GET", "/api/usage", key)).body.usage.messages_limit).toBe(10000)
    expect(errors.take()).toEqual([])
  })

  it("works from the keyboard alone: sign in, skip to the content, follow the navigation", async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to Leadline" }).waitFor()
    await page.keyboard.press("Tab") // the first choice, "Account owner", already checked
    await page.keyboard.press("Tab")
    await page.keyboard.type(ownerKey)
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    // The new page's heading has the focus (moved there once the page has rendered, which can come a
    // moment after the heading shows on a loaded machine); the skip link comes first in the tab order.
    await page
      .waitForFunction("document.activeElement?.id === 'page-title'", undefined, { timeout: 5_000 })
      .catch(() => undefined)
    expect(await page.evaluate("document.activeElement?.id")).toBe("page-title")
    const focused = () => page.evaluate("document.activeElement?.textContent?.trim()")
    const tabTo = async (text: string, key: "Tab" | "Shift+Tab") => {
      for (let steps = 0; steps < 20 && (await focused()) !== text; steps++) await page.keyboard.press(key)
      expect(await focused()).toBe(text)
    }
    await tabTo("Skip to content", "Shift+Tab")
    await tabTo("Leads", "Tab")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Leads" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/leads`)
    expect(errors.take()).toEqual([])
  })
})
