import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "../src/Fixtures.ts"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running
let dir: string

beforeAll(async () => {
  server = await TestServer.start()
  dir = await mkdtemp(join(tmpdir(), "leadline-openapi-ts-"))
})
afterAll(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

// A client an integrator could write: plain fetch, every type from the generated `paths`.
const CLIENT = `import type { paths } from "./schema.js"

type Leads = paths["/api/v1/leads"]
export type CreateLead = Leads["post"]["requestBody"]["content"]["application/json"]
export type Lead = Leads["post"]["responses"][201]["content"]["application/json"]
export type ListQuery = NonNullable<Leads["get"]["parameters"]["query"]>
export type LeadList = Leads["get"]["responses"][200]["content"]["application/json"]

export interface Client {
  readonly baseUrl: string
  readonly apiKey: string
}

const send = async (client: Client, method: string, path: string, expected: number, body?: unknown): Promise<unknown> => {
  const headers: Record<string, string> = { authorization: \`Bearer \${client.apiKey}\` }
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(\`\${client.baseUrl}\${path}\`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status !== expected) throw new Error(\`\${method} \${path}: \${response.status} \${text}\`)
  return JSON.parse(text)
}

export const createLead = async (client: Client, lead: CreateLead): Promise<Lead> =>
  (await send(client, "POST", "/api/v1/leads", 201, lead)) as Lead

export const listLeads = async (client: Client, query: ListQuery = {}): Promise<LeadList> => {
  const search = new URLSearchParams()
  // A repeated parameter (\`tag\`) is an array: one pair per value.
  for (const [name, value] of Object.entries(query)) for (const one of [value].flat()) if (one != null) search.append(name, one)
  return (await send(client, "GET", \`/api/v1/leads?\${search}\`, 200)) as LeadList
}
`

const MAIN = `import { createLead, listLeads, type Client } from "./client.js"

export const run = async (client: Client, phone: string): Promise<{ id: string; phones: Array<string>; total: number | null }> => {
  const lead = await createLead(client, { name: "Ada Lovelace", phone, email: null, tags: ["typed"], attributes: { source: "openapi-typescript" } })
  const page = await listLeads(client, { limit: "10" })
  const phones: Array<string> = page.leads.map((each) => each.phone)
  return { id: lead.id, phones, total: page.meta.total }
}
`

// Each line a mistake the generated types must refuse.
const WRONG = `import { createLead, listLeads, type Client } from "./client.js"

export const wrong = async (client: Client) => {
  await createLead(client, { name: "Ada", phone: 14155550123 })
  await createLead(client, { name: "Ada" })
  const lead = await createLead(client, { name: "Ada", phone: "+14155550123" })
  const misspelt: string = lead.nmae
  const page = await listLeads(client, { limit: 10 })
  const count: string = page.meta.total
  return [misspelt, count]
}
`

const compile = (files: ReadonlyArray<string>, outDir: string) => {
  const options: ts.CompilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noImplicitReturns: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    verbatimModuleSyntax: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    // fetch and URLSearchParams from the DOM's types, as a browser or Node 18+ has them.
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    types: [],
    outDir,
    rootDir: dir
  }
  const program = ts.createProgram(
    files.map((file) => join(dir, file)),
    options
  )
  const emitted = program.emit()
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics]
  return diagnostics.map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")
    if (diagnostic.file === undefined || diagnostic.start === undefined) return { file: "", line: 0, message }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return { file: diagnostic.file.fileName.slice(dir.length + 1), line: line + 1, message }
  })
}

describe("a client typed by openapi-typescript from the served document", () => {
  it("compiles under strict settings, is refused its mistakes, and creates and lists leads", async () => {
    // No kept-alive socket idles through the compiles, which block the event loop for seconds: the
    // server would close it as the next request went out on it.
    const served = await fetch(`${server.baseUrl}/api/openapi.json`, { headers: { connection: "close" } })
    const document = (await served.json()) as OpenAPI3
    // `{type: "object"}` (lead attributes) is any object, not `Record<string, never>`.
    const schema = astToString(await openapiTS(document, { emptyObjectsUnknown: true }))
    expect(schema).toContain("export interface paths")
    await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module" }))
    await writeFile(join(dir, "schema.ts"), schema)
    await writeFile(join(dir, "client.ts"), CLIENT)
    await writeFile(join(dir, "main.ts"), MAIN)
    await writeFile(join(dir, "wrong.ts"), WRONG)

    const right = compile(["schema.ts", "client.ts", "main.ts"], join(dir, "out"))
    expect(right.map((d) => `${d.file}:${d.line} ${d.message}`)).toEqual([])

    const wrong = compile(["schema.ts", "client.ts", "wrong.ts"], join(dir, "out-wrong"))
    expect(wrong.filter((d) => d.file !== "wrong.ts")).toEqual([])
    // Lines 4 to 9 of wrong.ts hold one mistake each, but line 6 (a correct create).
    expect([...new Set(wrong.map((d) => d.line))].sort()).toEqual([4, 5, 7, 8, 9])
    expect(wrong.find((d) => d.line === 4)?.message).toMatch(/number.*not assignable to type 'string'/s)
    expect(wrong.find((d) => d.line === 5)?.message).toMatch(/'phone' is missing/)
    expect(wrong.find((d) => d.line === 7)?.message).toMatch(/'nmae' does not exist/)

    // The compiled client, against the running server.
    const account = await makeAccount(server)
    const { run } = (await import(pathToFileURL(join(dir, "out", "main.js")).href)) as {
      run: (
        client: { baseUrl: string; apiKey: string },
        phone: string
      ) => Promise<{ id: string; phones: Array<string>; total: number }>
    }
    const phone = nextPhone()
    const result = await run({ baseUrl: server.baseUrl, apiKey: account.ownerKey }, phone)
    expect(result.id).toMatch(/^ld_/)
    expect(result.phones).toEqual([phone])
    expect(result.total).toBe(1)
  })
})
