/**
 * The Host and Origin check of Shoal's loopback servers (lib/standalone/allowed-hosts.ts): what
 * a DNS-rebinding page and a page of another origin send is refused, with a sentence naming
 * `--allowed-host`; what the console, the CLI and Shoal's own clients send is answered; the
 * spellings of a name (upper case, a trailing dot, IPv6, punycode) are decided deliberately.
 */
import { describe, expect, it } from "vitest";
import {
  type HostPolicy,
  hostRefusal,
  normalizeHostName,
  parseAllowedHosts,
  standaloneAllowedHosts,
  standalonePolicy,
} from "../../lib/standalone/allowed-hosts.js";

const PORT = 8080;
const loopbackOnly = standalonePolicy([]);

function refusal(
  host: string | undefined,
  opts: { origin?: string; method?: string; policy?: HostPolicy } = {},
): string | undefined {
  return hostRefusal(
    { host, origin: opts.origin, method: opts.method ?? "GET", port: PORT },
    opts.policy ?? loopbackOnly,
  );
}

describe("the Host a request is addressed to", () => {
  it("answers the loopback names on the server's own port, in any case, IPv6 spelling or with a trailing dot", () => {
    for (const host of [
      "localhost:8080",
      "127.0.0.1:8080",
      "[::1]:8080",
      "LOCALHOST:8080",
      "LocalHost.:8080",
      "[0:0:0:0:0:0:0:1]:8080",
      "127.0.0.1.:8080",
    ]) {
      expect(refusal(host), host).toBeUndefined();
    }
  });

  it("refuses a DNS-rebinding page's Host, naming --allowed-host and the name to pass", () => {
    const why = refusal("attacker.example:8080");
    expect(why).toMatch(/^Host 'attacker\.example:8080' is refused/);
    expect(why).toContain("localhost, 127.0.0.1 or [::1] on port 8080");
    expect(why).toContain("--allowed-host attacker.example");
    expect(why).toContain("SHOAL_ALLOWED_HOSTS=attacker.example");
  });

  it("refuses every other Host: another port, no port, no Host, other loopback spellings, garbage", () => {
    for (const host of [
      "localhost:3000",
      "localhost",
      "127.0.0.2:8080",
      "0.0.0.0:8080",
      "[::ffff:127.0.0.1]:8080",
      "::1:8080",
      "localhost..:8080",
      "localhost.attacker.example:8080",
      "user@localhost:8080",
      "localhost:8080/x",
      "local host:8080",
      "",
      undefined,
    ]) {
      expect(refusal(host), String(host)).toBeDefined();
    }
    // A loopback name on another port: the port is the problem, no name is suggested.
    expect(refusal("localhost:3000")).not.toContain("--allowed-host");
    expect(refusal(undefined)).toMatch(/without a Host header/);
  });

  it("answers an allowed name on any port, and no other name", () => {
    const policy = standalonePolicy(["shoal.example.com"]);
    for (const host of ["shoal.example.com", "shoal.example.com:8443", "SHOAL.example.com.:80"]) {
      expect(refusal(host, { policy }), host).toBeUndefined();
    }
    for (const host of ["other.example.com", "sub.shoal.example.com", "example.com:8080"]) {
      expect(refusal(host, { policy }), host).toMatch(/is refused/);
    }
    expect(refusal("other.example.com", { policy })).toContain("or shoal.example.com");
  });
});

describe("the Origin of a request", () => {
  const writes = ["POST", "PUT", "DELETE", "PATCH"];

  it("lets a write from the server's own pages through, whatever the scheme", () => {
    for (const origin of [
      "http://localhost:8080",
      "http://127.0.0.1:8080",
      "https://[::1]:8080",
      "HTTP://LOCALHOST:8080",
    ]) {
      for (const method of writes) {
        expect(
          refusal("localhost:8080", { origin, method }),
          `${method} ${origin}`,
        ).toBeUndefined();
      }
    }
  });

  it("refuses a write from another origin: another site, another local port, an opaque or bad Origin", () => {
    for (const origin of [
      "https://evil.example",
      "http://attacker.example:8080",
      "http://localhost:3000",
      "https://localhost",
      "null",
      "not a url",
      "http://localhost:8080, https://evil.example",
    ]) {
      for (const method of writes) {
        const why = refusal("localhost:8080", { origin, method });
        expect(why, `${method} ${origin}`).toMatch(/^Origin '.*' is refused: only pages of/);
      }
    }
    expect(refusal("localhost:8080", { origin: "https://evil.example", method: "POST" })).toContain(
      "--allowed-host evil.example",
    );
  });

  it("leaves reads alone (GET, HEAD, OPTIONS): they change nothing, and CORS keeps their answers from the page", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "get", undefined]) {
      expect(
        hostRefusal(
          { host: "localhost:8080", origin: "https://evil.example", method, port: PORT },
          loopbackOnly,
        ),
        String(method),
      ).toBeUndefined();
    }
  });

  it("lets a write without an Origin through (the CLI, curl, the SDKs)", () => {
    expect(refusal("127.0.0.1:8080", { method: "POST" })).toBeUndefined();
  });

  it("admits an allowed name's pages on any port and scheme (a TLS proxy in front)", () => {
    const policy = standalonePolicy(["shoal.example.com"]);
    for (const origin of ["https://shoal.example.com", "http://shoal.example.com:8443"]) {
      expect(refusal("127.0.0.1:8080", { origin, method: "POST", policy }), origin).toBeUndefined();
    }
    expect(
      refusal("shoal.example.com", { origin: "https://other.example.com", method: "POST", policy }),
    ).toMatch(/^Origin/);
  });

  it("checks reads too when the policy says so (shoal console's proxy)", () => {
    const policy: HostPolicy = { server: "shoal console", allowedHosts: [], originOnReads: true };
    expect(refusal("localhost:8080", { origin: "https://evil.example", policy })).toMatch(
      /may send requests on shoal console$/,
    );
    expect(refusal("localhost:8080", { origin: "http://localhost:8080", policy })).toBeUndefined();
  });
});

describe("allowed names", () => {
  it("are normalised as the check compares them", () => {
    expect(normalizeHostName(" Shoal.Example.COM. ")).toBe("shoal.example.com");
    expect(normalizeHostName("::1")).toBe("[::1]");
    expect(normalizeHostName("[::1]")).toBe("[::1]");
    expect(normalizeHostName("bücher.example")).toBe("xn--bcher-kva.example");
    expect(normalizeHostName("192.168.1.10")).toBe("192.168.1.10");
  });

  it("refuse what is not a bare host name, saying why", () => {
    expect(() => normalizeHostName("")).toThrow(/must not be empty/);
    expect(() => normalizeHostName("shoal.example.com:8080")).toThrow(/without a port/);
    expect(() => normalizeHostName("[::1]:8080")).toThrow(/without a port/);
    expect(() => normalizeHostName("https://shoal.example.com")).toThrow(/not a URL/);
    expect(() => normalizeHostName("shoal.example.com/x")).toThrow(/not a URL/);
    expect(() => normalizeHostName("*.example.com")).toThrow(/wildcards/);
    expect(() => normalizeHostName("a b")).toThrow(/not a valid host name/);
  });

  it("come from SHOAL_ALLOWED_HOSTS (comma-separated) and --allowed-host together, each once", () => {
    expect(parseAllowedHosts(" a.example, B.example,, ", "SHOAL_ALLOWED_HOSTS")).toEqual([
      "a.example",
      "b.example",
    ]);
    expect(parseAllowedHosts(undefined, "X")).toEqual([]);
    expect(
      standaloneAllowedHosts(["A.example", "c.example"], {
        SHOAL_ALLOWED_HOSTS: "a.example,b.example",
      }),
    ).toEqual(["a.example", "c.example", "b.example"]);
  });

  it("name the flag or the variable a bad name came from", () => {
    expect(() => standaloneAllowedHosts(["x:80"], {})).toThrow(/^--allowed-host: 'x:80'/);
    expect(() =>
      standaloneAllowedHosts([], { SHOAL_ALLOWED_HOSTS: "ok.example,http://x" }),
    ).toThrow(/^SHOAL_ALLOWED_HOSTS: 'http:\/\/x'/);
  });
});
