/**
 * What REDIS_URL names: one Redis (`redis://`, `rediss://`), or a Redis Cluster
 * (`redis+cluster://` or `rediss+cluster://`, then the same user and password as a plain URL
 * and one or more seed nodes separated by commas: `redis+cluster://:pw@10.0.0.1:6379,10.0.0.2:6379`).
 * A cluster's seed nodes need not be all of its nodes: the client learns the rest from them.
 */
export interface ClusterTarget {
  readonly tls: boolean;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
}

const CLUSTER_SCHEME = /^(rediss?)\+cluster:\/\//i;
const NODE = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;

/** True when `url` names a Redis Cluster. */
export function isClusterUrl(url: string): boolean {
  return CLUSTER_SCHEME.test(url);
}

/**
 * The cluster a `redis+cluster://` URL names, or the rule it breaks (never quoting the URL,
 * which may hold a password).
 */
export function parseClusterUrl(url: string): ClusterTarget | string {
  const scheme = CLUSTER_SCHEME.exec(url);
  if (!scheme) return "must start with redis+cluster:// or rediss+cluster://";
  const rest = url.slice(scheme[0].length);
  const at = rest.lastIndexOf("@");
  const auth = at === -1 ? undefined : rest.slice(0, at);
  const hostsAndPath = at === -1 ? rest : rest.slice(at + 1);
  const hosts = hostsAndPath.replace(/\/\d*$/, "");
  if (hosts !== hostsAndPath && !/\/0?$/.test(hostsAndPath)) {
    return "a cluster has one database: leave the path out (or /0)";
  }
  const nodes = [];
  for (const node of hosts.split(",")) {
    const match = NODE.exec(node);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65_535) {
      return "each seed node must be host:port (port 1 to 65535), separated by commas";
    }
    nodes.push({ host: (match[1] as string).replace(/^\[|\]$/g, ""), port });
  }
  const [user, ...password] = (auth ?? "").split(":");
  try {
    return {
      tls: scheme[1]?.toLowerCase() === "rediss",
      username: user ? decodeURIComponent(user) : undefined,
      password: password.length > 0 ? decodeURIComponent(password.join(":")) : undefined,
      nodes,
    };
  } catch {
    return "the user and password must be percent-encoded";
  }
}

/** The cluster `url` names; throws (naming the rule, never the URL) when it names none. */
export function clusterTargetOf(url: string): ClusterTarget {
  const target = parseClusterUrl(url);
  // config/ refuses a bad one at start: here it is a caller's mistake.
  if (typeof target === "string") throw new Error(`REDIS_URL ${target}`);
  return target;
}

/** The URL of one node of a cluster, with the cluster's user, password and TLS. */
export function nodeUrl(target: ClusterTarget, node: ClusterTarget["nodes"][number]): string {
  const auth =
    target.username === undefined && target.password === undefined
      ? ""
      : `${encodeURIComponent(target.username ?? "")}:${encodeURIComponent(target.password ?? "")}@`;
  const host = node.host.includes(":") ? `[${node.host}]` : node.host;
  return `${target.tls ? "rediss" : "redis"}://${auth}${host}:${node.port}`;
}
