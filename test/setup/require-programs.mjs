// Says, before the deployment or browser tests start, which programs they need and which are
// missing. The npm script that runs it is named by npm_lifecycle_event.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

const missing = process.argv.slice(2).filter((pair) => {
  const [name] = pair.split(":");
  return !(process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
});
if (missing.length > 0) {
  const packages = [...new Set(missing.map((pair) => pair.split(":")[1]))];
  console.error(
    `npm run ${process.env.npm_lifecycle_event ?? "test:deploy"} needs ${missing.map((p) => p.split(":")[0]).join(", ")}: ` +
      `apt-get install --no-install-recommends ${packages.join(" ")} (.ci/run installs them)`,
  );
  process.exit(1);
}
