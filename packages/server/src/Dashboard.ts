import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse, HttpStaticServer } from "effect/http"

export const DASHBOARD_PATH = "/dashboard"

/** Vite emits no inline script or style, so the page runs under the strictest policy. */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

/**
 * The page built into this package's `dist/dashboard`: packed with the server, and built there in
 * the repository by `npm install` (the root `prepare` script runs the dashboard's `vite build`).
 * The same path from `src/` and from `dist/`, so the server finds it run either way.
 */
export const defaultDist = () => fileURLToPath(new URL("../dist/dashboard", import.meta.url))

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>
<body><main><h1>The dashboard is not built</h1>
<p>Build it with <code>npm run build:dashboard</code> in the repository (<code>npm install</code> does it), then reload.
The API itself is running: its docs are at <a href="/docs">/docs</a>.</p></main></body></html>`

export const isBuilt = (dist: string) => existsSync(join(dist, "index.html"))

/**
 * The dashboard at `/dashboard` (the wildcard route takes the bare path too): the built page with its deep links falling back to
 * index.html, or, when the build is missing, a 503 page that says how to build it.
 */
export const routes = (dist: string) =>
  HttpRouter.use((router) =>
    Effect.gen(function* () {
      const dashboard = router.prefixed(DASHBOARD_PATH)
      if (!isBuilt(dist)) {
        const page = HttpServerResponse.text(NOT_BUILT, { contentType: "text/html; charset=utf-8" }).pipe(
          HttpServerResponse.setStatus(503),
          HttpServerResponse.setHeaders(SECURITY_HEADERS)
        )
        yield* dashboard.add("GET", "/*", Effect.succeed(page))
        return
      }
      const serve = yield* HttpStaticServer.make({ root: dist, spa: true })
      yield* dashboard.add(
        "GET",
        "/*",
        // A missing file fails as a missing route: the API's JSON 404, from the one error mapping.
        Effect.map(serve, HttpServerResponse.setHeaders(SECURITY_HEADERS))
      )
    })
  )
