// Package deploy holds the files an operator deploys deerflow with: the
// systemd unit, the container files and the Slack app manifest. The
// manifest is embedded so that `deerflow init` can print it.
package deploy

import _ "embed"

// SlackManifest is slack-app-manifest.yaml: what to paste into Slack's
// "Create New App → From an app manifest".
//
//go:embed slack-app-manifest.yaml
var SlackManifest string
