import type { ComponentType } from "preact"
import { useEffect, useState } from "preact/hooks"
import { ApiError } from "./api.ts"
import { ErrorText, Loading } from "./ui.tsx"

/**
 * A page fetched the first time it is shown (its own chunk), then kept: the shell and the sign-in
 * load at once, each page when it is opened.
 */
export const lazyPage = <Props extends object>(load: () => Promise<ComponentType<Props>>) => {
  let loaded: ComponentType<Props> | undefined
  let loading: Promise<ComponentType<Props>> | undefined
  return (props: Props) => {
    const [Page, setPage] = useState<ComponentType<Props> | undefined>(() => loaded)
    const [error, setError] = useState<ApiError | undefined>(undefined)
    useEffect(() => {
      if (Page !== undefined) return
      let live = true
      loading ??= load().then((page) => {
        loaded = page
        return page
      })
      loading.then(
        (page) => {
          if (!live) return
          setPage(() => page)
          setLate(true)
        },
        () => {
          loading = undefined
          if (live) setError(new ApiError("This page could not be loaded: check the connection and reload"))
        }
      )
      return () => {
        live = false
      }
    }, [])
    const [late, setLate] = useState(false)
    // The shell moved the focus to the heading before a page fetched late had one: move it now.
    useEffect(() => {
      if (late) document.getElementById("page-title")?.focus()
    }, [late])
    if (Page !== undefined) return <Page {...props} />
    return error === undefined ? <Loading what="the page" /> : <ErrorText error={error} />
  }
}
