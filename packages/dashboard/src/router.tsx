import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"

/** Paths under `/dashboard/`: a `location.pathname` switch is all the routing the page needs. */
export const BASE = "/dashboard"

const current = () => {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname
  return path === "" ? "/" : path
}

export const navigate = (path: string) => {
  history.pushState(null, "", `${BASE}${path}`)
  dispatchEvent(new PopStateEvent("popstate"))
}

export const usePath = () => {
  const [path, setPath] = useState(current)
  useEffect(() => {
    const update = () => setPath(current())
    addEventListener("popstate", update)
    return () => removeEventListener("popstate", update)
  }, [])
  return path
}

export const Link = (props: { href: string; children: ComponentChildren; current?: boolean }) => (
  <a
    href={`${BASE}${props.href}`}
    aria-current={props.current === true ? "page" : undefined}
    onClick={(event) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
      event.preventDefault()
      navigate(props.href)
    }}
  >
    {props.children}
  </a>
)
