import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as TestServer from "@leadline/testkit/TestServer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ServerProcess from "./support/ServerProcess.ts"

let server: TestServer.Running
// An empty data directory, so a missing LEADLINE_ADMIN_TOKEN is not covered up by a token file on disk.
let emptyDataDir: string

/** Runs the real CLI as a user would, asynchronously so the in-process server keeps answering. */
const leadline = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  ServerProcess.runCli(args, { LEADLINE_DATA_DIR: emptyDataDir, LEADLINE_ADMIN_TOKEN: server.adminToken, ...env })

/** A command with `--json` against the test server: it must succeed and print one JSON document. */
const json = async (...args: ReadonlyArray<string>): Promise<any> => {
  const run = await leadline([...args, "--json", "--url", server.baseUrl])
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" })
  return JSON.parse(run.stdout)
}

const me = async (apiKey: string) => {
  const response = await fetch(`${server.baseUrl}/api/me`, { headers: { Authorization: `Bearer ${apiKey}` } })
  return { status: response.status, body: (await response.json()) as any }
}

/** A loopback port nothing listens on: bound, then released. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

beforeAll(async () => {
  server = await TestServer.start()
  emptyDataDir = mkdtempSync(join(tmpdir(), "leadline-cli-"))
})

afterAll(async () => {
  await server.close()
  rmSync(emptyDataDir, { recursive: true, force: true })
})

describe("leadline", () => {
  it("creates an account whose owner key has full access", async () => {
    const account = await json("accounts", "create", "--name", "Acme Ltd", "--plan", "pro")
    expect(account.api_key).toMatch(/^lk_[A-Za-z0-9_-]{43}$/)
    const { status, body } = await me(account.api_key)
    expect(status).toBe(200)
    expect(body.account).toMatchObject({ user_id: account.owner_user_id, role: "owner", is_owner: true })
    expect(body.scopes).toEqual([])
    const usage = await fetch(`${server.baseUrl}/api/usage`, {
      headers: { Authorization: `Bearer ${account.api_key}` }
    })
    expect(await usage.json()).toMatchObject({ usage: { messages_limit: 10000 }, subscription: { plan_id: "pro" } })
  })

  it("adds a user and issues a key for that user", async () => {
    const account = await json("accounts", "create", "--name", "Users Ltd")
    const user = await json("users", "create", "--account", account.account_id, "--role", "member")
    expect(user.role).toBe("member")
    const key = await json("keys", "create", "--account", account.account_id, "--user", user.user_id)
    const { body } = await me(key.api_key)
    expect(body.account).toMatchObject({ user_id: user.user_id, owner_user_id: account.owner_user_id, role: "member" })
  })

  it("issues a scoped key, lists it without the key, changes its scopes and revokes it", async () => {
    const account = await json("accounts", "create", "--name", "Keys Ltd")
    const key = await json(
      "keys",
      "create",
      "--account",
      account.account_id,
      "--name",
      "dashboard",
      "--scope",
      "leads:read",
      "--scope",
      "analytics:read"
    )
    expect(key.api_key).toMatch(/^lk_/)
    expect(key.scopes).toEqual(["leads:read", "analytics:read"])
    expect((await me(key.api_key)).body.scopes).toEqual(["leads:read", "analytics:read"])

    const listed = await json("keys", "list", "--account", account.account_id)
    const summary = listed.keys.find((entry: any) => entry.id === key.id)
    expect(summary).toMatchObject({ name: "dashboard", scopes: ["leads:read", "analytics:read"], revoked_at: null })
    expect(summary.prefix).toBe(key.api_key.slice(0, summary.prefix.length))
    expect(JSON.stringify(listed)).not.toContain(key.api_key)
    expect(listed.keys).toHaveLength(2)

    const changed = await json("keys", "set-scopes", key.id, "--scope", "leads:write")
    expect(changed.scopes).toEqual(["leads:write"])
    expect((await me(key.api_key)).body.scopes).toEqual(["leads:write"])

    const full = await json("keys", "set-scopes", key.id, "--full-access")
    expect(full.scopes).toEqual([])
    expect((await me(key.api_key)).body.scopes).toEqual([])

    expect(await json("keys", "revoke", key.id)).toEqual({ id: key.id, revoked: true })
    expect((await me(key.api_key)).status).toBe(401)
  })

  it("imports a file into an account, follows the job and revokes the key it issued for it", async () => {
    const account = await json("accounts", "create", "--name", "Imports Ltd")
    const file = join(emptyDataDir, "leads.csv")
    writeFileSync(file, "Full Name,Mobile\nMary Jackson,+1 415 555 0175\nNo Phone,12345\n")
    const run = await leadline([
      "leads",
      "import",
      file,
      "--account",
      account.account_id,
      "--mapping",
      '{"name":"Full Name","phone":"Mobile"}',
      "--url",
      server.baseUrl
    ])
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" })
    // Piped, not a terminal: plain lines, then the summary with the refused row.
    expect(run.stdout).toMatch(/^Uploaded .*leads\.csv: job ljob_[0-9a-z]{26}\n/)
    expect(run.stdout).toMatch(
      /Import ljob_[0-9a-z]{26} succeeded: 2\/2 rows: 1 created, 0 updated, 0 unchanged, 1 failed\n {2}row 3 phone: phone must be an international number/
    )
    const found = await fetch(`${server.baseUrl}/api/v1/leads?q=%2B14155550175`, {
      headers: { Authorization: `Bearer ${account.api_key}` }
    })
    expect(((await found.json()) as any).leads[0].name).toBe("Mary Jackson")
    const keys = await json("keys", "list", "--account", account.account_id)
    const issued = keys.keys.filter((key: any) => key.name === "leadline leads import")
    expect(issued).toHaveLength(1)
    expect(issued[0].revoked_at).not.toBeNull()
  })

  it("prints the job as JSON with --json and says what the server refused", async () => {
    const account = await json("accounts", "create", "--name", "Imports JSON Ltd")
    const file = join(emptyDataDir, "leads.ndjson")
    writeFileSync(file, `${JSON.stringify({ name: "Nd", phone: "+1 415 555 0176" })}\n`)
    const job = await json("leads", "import", file, "--account", account.account_id, "--key", account.api_key)
    expect(job).toMatchObject({ kind: "import", state: "succeeded", counts: { read: 1, created: 1 } })
    const refused = await leadline([
      "leads",
      "import",
      file,
      "--account",
      account.account_id,
      "--key",
      account.api_key,
      "--mapping",
      '{"nickname":"x"}',
      "--url",
      server.baseUrl
    ])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("The server answered 400 validation_error")
    expect(refused.stderr).toContain("mapping.nickname")
  })

  it("prints a readable summary without --json", async () => {
    const account = await json("accounts", "create", "--name", "Readable Ltd")
    const run = await leadline(["keys", "create", "--account", account.account_id, "--scope", "leads:read"], {
      LEADLINE_URL: server.baseUrl
    })
    expect(run.status).toBe(0)
    const apiKey = /api key: (lk_\S+)/.exec(run.stdout)?.[1]
    expect(apiKey).toBeDefined()
    expect((await me(apiKey!)).body.scopes).toEqual(["leads:read"])

    const list = await leadline(["keys", "list", "--account", account.account_id, "--url", server.baseUrl])
    expect(list.status).toBe(0)
    expect(list.stdout).toMatch(/leads:read/)
    expect(list.stdout).toMatch(/full access/)
    expect(list.stdout).not.toContain(apiKey)
  })

  it("reports the server's error and code and exits 1", async () => {
    const run = await leadline(["keys", "list", "--account", "acc_missing", "--url", server.baseUrl])
    expect(run.status).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain("not_found")
    expect(run.stderr).toContain("No account with id acc_missing")
  })

  it("reports an unknown scope as the server's validation error", async () => {
    const account = await json("accounts", "create", "--name", "Scopes Ltd")
    const run = await leadline(["keys", "create", "--account", account.account_id, "--scope", "leads:everything"], {
      LEADLINE_URL: server.baseUrl
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("validation_error")
  })

  it("refuses set-scopes with neither --scope nor --full-access", async () => {
    const run = await leadline(["keys", "set-scopes", "key_any", "--url", server.baseUrl])
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("--full-access")
  })

  it("says which URL it could not reach and exits 1", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`
    const run = await leadline(["keys", "list", "--account", "acc_any", "--url", url])
    expect(run.status).toBe(1)
    expect(run.stderr).toContain(`Could not reach the Leadline server at ${url}`)
    expect(run.stderr).toContain("ECONNREFUSED")
  })

  it("says where it looked for the admin token, and never prints the token", async () => {
    const run = await leadline(["keys", "list", "--account", "acc_any", "--url", server.baseUrl], {
      LEADLINE_ADMIN_TOKEN: undefined
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("LEADLINE_ADMIN_TOKEN")
    expect(run.stderr).toContain(join(emptyDataDir, "admin-token"))

    const refused = await leadline(["keys", "list", "--account", "acc_any", "--url", server.baseUrl], {
      LEADLINE_ADMIN_TOKEN: "lla_wrong_token"
    })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain("unauthorized")
    expect(refused.stderr + refused.stdout).not.toContain("lla_wrong_token")
  })
})
