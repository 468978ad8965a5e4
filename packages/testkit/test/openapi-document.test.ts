import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import * as http from "node:http"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { NodeHttpServer } from "@effect/platform-node"
import { createServer } from "@leadline/http-adapter/NodeServer"
import * as OpenApiDocument from "@leadline/http-adapter/OpenApiDocument"
import * as Server from "@leadline/http-adapter/Server"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

/** A GET with the headers as given: fetch sets `Host` itself, node:http sends the one asked for. */
const get = (baseUrl: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.get(`${baseUrl}${path}`, { headers }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
      })
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
      response.on("error", reject)
    })
    request.on("error", reject)
  })

/** Only the document and docs page routes, on their own real server. */
const serveDocument = async (options: Pick<Server.Options, "publicUrl">) => {
  const layer = HttpRouter.serve(Server.documentRoutes(options), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const scope = Effect.runSync(Scope.make())
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    return { baseUrl: HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address), close }
  } catch (error) {
    await close()
    throw error
  }
}

describe("the served OpenAPI document", () => {
  it("passes redocly lint's recommended rules with no error and no warning", async () => {
    const document = await (await fetch(`${server.baseUrl}${Server.OPENAPI_PATH}`)).text()
    const dir = await mkdtemp(join(tmpdir(), "leadline-redocly-"))
    try {
      await writeFile(join(dir, "openapi.json"), document)
      const cli = join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin", "cli.js")
      // The CLI exits 1 on errors, with its report on stdout all the same.
      const run = await promisify(execFile)(
        process.execPath,
        [cli, "lint", "openapi.json", "--extends=recommended", "--format=json", "--max-problems=1000"],
        {
          // Run from the temporary folder: no redocly.yaml of the repository changes the rules.
          cwd: dir,
          env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_NOTIFICATIONS: "true", NO_COLOR: "1" },
          maxBuffer: 64 * 1024 * 1024
        }
      ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr }))
      const report = JSON.parse(run.stdout) as {
        totals: { errors: number; warnings: number }
        problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>
      }
      const problems = report.problems.map(
        (problem) =>
          `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? "?"}: ${problem.message}`
      )
      expect(problems).toEqual([])
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("carries info.license and no anyOf that repeats a member, has an empty one or only one", async () => {
    const document = (await (await fetch(`${server.baseUrl}${Server.OPENAPI_PATH}`)).json()) as any
    expect(document.info.license).toEqual({ name: "Apache-2.0", identifier: "Apache-2.0" })
    const redundant: Array<string> = []
    const walk = (value: unknown, path: string): void => {
      if (Array.isArray(value)) {
        value.forEach((item, index) => {
          walk(item, `${path}/${index}`)
        })
        return
      }
      if (typeof value !== "object" || value === null) return
      const anyOf = (value as { anyOf?: unknown }).anyOf
      if (Array.isArray(anyOf)) {
        const members = anyOf.map((member) => JSON.stringify(member))
        if (members.length < 2 || members.includes("{}") || new Set(members).size < members.length) {
          redundant.push(`${path}: ${JSON.stringify(anyOf)}`)
        }
      }
      for (const [key, child] of Object.entries(value)) walk(child, `${path}/${key}`)
    }
    walk(document, "#")
    expect(redundant).toEqual([])
    // What the tidying kept: optional-or-null is still "X or null", a one-literal list its literal.
    expect(document.components.schemas.CreateLead.properties.email).toEqual({
      anyOf: [{ type: "string", maxLength: 254 }, { type: "null" }]
    })
    expect(document.components.schemas.Agent.properties.channels.items).toEqual({ type: "string", enum: ["whatsapp"] })
  })

  it("tidies anyOf without changing what a schema accepts", () => {
    expect(
      OpenApiDocument.tidy({
        a: { anyOf: [{ type: "string" }, { type: "null" }, { type: "null" }] },
        b: { anyOf: [{}, { type: "null" }], description: "anything" },
        c: { anyOf: [{ type: "null" }, { type: "null" }], description: "outer" },
        d: { anyOf: [{ $ref: "#/x", description: "inner" }], description: "outer" },
        e: { anyOf: [{ type: "object", properties: { x: { anyOf: [{ type: "null" }] } } }, { type: "string" }] }
      })
    ).toEqual({
      a: { anyOf: [{ type: "string" }, { type: "null" }] },
      b: { description: "anything" },
      c: { type: "null", description: "outer" },
      d: { $ref: "#/x", description: "outer" },
      e: { anyOf: [{ type: "object", properties: { x: { type: "null" } } }, { type: "string" }] }
    })
  })

  it("names the origin the request reached as its server", async () => {
    const served = await get(server.baseUrl, Server.OPENAPI_PATH)
    expect(served.status).toBe(200)
    expect(served.body.servers).toEqual([{ url: server.baseUrl }])
    expect((await get(server.baseUrl, Server.OPENAPI_PATH, { host: "api.leadline.test:8443" })).body.servers).toEqual([
      { url: "http://api.leadline.test:8443" }
    ])
    const proxied = await get(server.baseUrl, Server.OPENAPI_PATH, {
      host: "api.leadline.test",
      "x-forwarded-proto": "https, http"
    })
    expect(proxied.body.servers).toEqual([{ url: "https://api.leadline.test" }])
    // Only http and https are schemes of the server.
    const odd = await get(server.baseUrl, Server.OPENAPI_PATH, {
      host: "api.leadline.test",
      "x-forwarded-proto": "ftp"
    })
    expect(odd.body.servers).toEqual([{ url: "http://api.leadline.test" }])
  })

  it("names a configured public URL whatever the request, and keeps the docs page", async () => {
    const running = await serveDocument({ publicUrl: "https://api.leadline.test/crm/" })
    try {
      for (const headers of [{}, { host: "elsewhere.test", "x-forwarded-proto": "http" }]) {
        const served = await get(running.baseUrl, Server.OPENAPI_PATH, headers)
        expect(served.status).toBe(200)
        expect(served.body.servers).toEqual([{ url: "https://api.leadline.test/crm" }])
      }
      const docs = await fetch(`${running.baseUrl}${Server.DOCS_PATH}`)
      expect(docs.status).toBe(200)
      expect(await docs.text()).toContain("Leadline API")
    } finally {
      await running.close()
    }
  })

  it("refuses a public URL that is not an absolute http(s) URL", async () => {
    for (const publicUrl of ["api.leadline.test", "ftp://api.leadline.test", "https://api.leadline.test/?a=1"]) {
      await expect(serveDocument({ publicUrl })).rejects.toThrow(/public URL/)
    }
    expect(OpenApiDocument.publicServerUrl("https://api.leadline.test")).toBe("https://api.leadline.test")
    expect(OpenApiDocument.publicServerUrl("http://127.0.0.1:3000/")).toBe("http://127.0.0.1:3000")
  })
})
