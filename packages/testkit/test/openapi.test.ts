import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../src/Http.ts"
import * as Resources from "../src/Resources.ts"
import * as TestServer from "../src/TestServer.ts"

let server: TestServer.Running

beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

describe("the OpenAPI document and docs page", () => {
  it("serves a document that validates as OpenAPI 3.x", async () => {
    const reply = await call(server, "GET", "/api/openapi.json")
    expect(reply.status).toBe(200)
    const validator = new Validator()
    const result = await validator.validate(reply.body)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(reply.body.openapi).toMatch(/^3\./)
  })

  it("documents every route, the bearer scheme, the Idempotency-Key header and the error bodies", async () => {
    const spec = (await call(server, "GET", "/api/openapi.json")).body
    // Every path the descriptors declare, and no other (coverage.test.ts checks the operations one by one).
    expect(Object.keys(spec.paths).sort()).toEqual(
      [...new Set(Resources.all.flatMap((r) => r.routes.map((route) => route.path)))].sort()
    )
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(["/api/me", "/api/usage", "/api/v1/leads/{id}"]))
    const create = spec.paths["/api/v1/leads"].post
    expect(
      create.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`)
    ).toContain("header:idempotency-key")
    expect(Object.keys(create.responses).sort()).toEqual([
      "201",
      "400",
      "401",
      "403",
      "409",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503"
    ])
    const schemes = Object.values(spec.components.securitySchemes) as Array<{ type: string; scheme: string }>
    expect(schemes.some((scheme) => scheme.type === "http" && scheme.scheme.toLowerCase() === "bearer")).toBe(true)
    const forbidden = JSON.stringify(create.responses["403"])
    expect(forbidden).not.toContain("_tag")
    // 503 (the database away, a request over its time limit) on every operation, with its code.
    for (const [path, operations] of Object.entries(spec.paths) as Array<[string, Record<string, any>]>) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(Object.keys(operation.responses ?? {}), `${method} ${path}`).toContain("503")
      }
    }
    const unavailable = create.responses["503"].content["application/json"].schema.$ref.split("/").at(-1)
    expect(spec.components.schemas[unavailable]).toEqual({
      type: "object",
      properties: { error: { type: "string" }, code: { type: "string", enum: ["service_unavailable"] } },
      required: ["error", "code"],
      additionalProperties: false
    })
  })

  it("serves a docs page, Scalar's script inline, the same on every visit (built on the first)", async () => {
    const visit = async () => {
      const response = await fetch(`${server.baseUrl}/docs`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      return response.text()
    }
    const [first, second] = [await visit(), await visit()]
    expect(first).toContain("Leadline API")
    expect(first).toContain("window.Scalar.createApiReference")
    expect(first.length).toBeGreaterThan(1_000_000)
    expect(second).toBe(first)
  })
})
