import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqlApp from "@leadline/sql-adapter/SqlApp"
import { makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { questions, sources } from "../src/knowledge/SearchCorpus.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Search quality (issue 14): the corpus's customer questions against its pages, through the search
 * route, on each database. The builtin model quotes the first passage, so rank 1 is what a customer
 * reads; an OpenAI-compatible model reads the first `max_snippets` (4 by default), so the top 3 is
 * what it can answer from. Measured on 2026-11-24: 100% and 100% on PostgreSQL 15 and PGlite. The
 * floors leave room for stemmers of other PostgreSQL versions (4 misses of 27 at rank 1, 1 in the
 * top 3) and fail on a ranking that stops putting whole matches first. The test also prints how
 * many questions `websearch_to_tsquery` alone (every term required) would answer: the reason for
 * the two tiers.
 */
const RANK_1_FLOOR = 0.85
const RANK_3_FLOOR = 0.95

const onDatabase = (name: string, postgres: "when-configured" | "never") =>
  describe(`knowledge search quality ${name}`, () => {
    let database: TestDatabase.TestDatabase
    let server: TestServer.Running
    let key: string
    const titleOf = new Map<string, string>()

    beforeAll(async () => {
      database = await TestDatabase.make({ postgres })
      server = await TestServer.start({ app: SqlApp.layer(database.config) })
      key = (await makeAccount(server)).ownerKey
      for (const source of sources) {
        const reply = await call(server, "POST", "/api/v1/knowledge/sources", {
          auth: key,
          json: { kind: "markdown", title: source.title, content: source.content }
        })
        expect(reply.status, reply.text).toBe(201)
        titleOf.set(reply.body.id, source.title)
      }
    })
    afterAll(async () => {
      await server?.close()
      await database?.dispose()
    })

    it(`finds the page that answers at rank 1 for ≥ ${RANK_1_FLOOR} and in the top 3 for ≥ ${RANK_3_FLOOR} of ${questions.length} questions`, async () => {
      const misses: Array<string> = []
      let first = 0
      let top3 = 0
      let strict = 0
      for (const { question, source } of questions) {
        const reply = await call(server, "GET", `/api/v1/knowledge/search?limit=3&q=${encodeURIComponent(question)}`, {
          auth: key
        })
        expect(reply.status, reply.text).toBe(200)
        const found = reply.body.results.map((result: { source_id: string }) => titleOf.get(result.source_id))
        if (found[0] === source) first++
        // Whole matches rank first: a right first hit with every term is one the strict query finds too.
        if (found[0] === source && reply.body.results[0].match === "all_terms") strict++
        if (found.includes(source)) top3++
        else misses.push(`${question} → ${found.join(" | ") || "nothing"} (wanted ${source})`)
      }
      const rank1 = first / questions.length
      const rank3 = top3 / questions.length
      console.log(
        `knowledge search ${name}: rank 1 ${(rank1 * 100).toFixed(0)}%, top 3 ${(rank3 * 100).toFixed(0)}% of ${questions.length} questions (every term required: ${((strict / questions.length) * 100).toFixed(0)}% at rank 1)${misses.length === 0 ? "" : `; missed: ${misses.join("; ")}`}`
      )
      expect(rank1).toBeGreaterThanOrEqual(RANK_1_FLOOR)
      expect(rank3).toBeGreaterThanOrEqual(RANK_3_FLOOR)
    })
  })

onDatabase("on embedded PGlite", "never")
onDatabase("on PostgreSQL (PGlite when TEST_DATABASE_URL is unset)", "when-configured")
