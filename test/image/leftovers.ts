import { run } from "./podman.js";

/** The label of every container and network the container tests start. */
export const TEST_LABEL = "moneyq-image-test";
/** The compose project of the stack test: podman-compose labels its containers, volumes and network with it. */
export const COMPOSE_PROJECT = "moneyq-image-test";

function ids(args: readonly string[]): string[] {
  return run("podman", args)
    .stdout.split("\n")
    .filter((line) => line !== "");
}

/**
 * Removes whatever these tests started and a run killed midway left behind: containers,
 * the stack's volumes, networks. Runs before the tests and after them.
 */
export function removeLeftovers(): void {
  const project = `label=io.podman.compose.project=${COMPOSE_PROJECT}`;
  const containers = [
    ...ids(["ps", "--all", "--quiet", "--filter", `label=${TEST_LABEL}`]),
    ...ids(["ps", "--all", "--quiet", "--filter", project]),
  ];
  if (containers.length > 0) run("podman", ["rm", "--force", "--time", "10", ...containers]);
  const volumes = ids(["volume", "ls", "--quiet", "--filter", project]);
  if (volumes.length > 0) run("podman", ["volume", "rm", "--force", ...volumes]);
  const networks = [
    ...ids(["network", "ls", "--quiet", "--filter", `label=${TEST_LABEL}`]),
    ...ids(["network", "ls", "--quiet", "--filter", project]),
  ];
  if (networks.length > 0) run("podman", ["network", "rm", "--force", ...networks]);
}
