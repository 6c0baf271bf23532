// A CoreDNS with only the plugins the local cluster's DNS needs (scripts/install-kube.sh builds it).
//
// The stock coredns binary links every plugin (cloud DNS providers among them), which takes far
// longer to build on a small machine than this; CoreDNS documents this way of choosing plugins:
// set dnsserver.Directives, import the plugins, call coremain.Run.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/reload"
)

// The order in which a query passes the plugins, as in CoreDNS's plugin.cfg.
var directives = []string{"reload", "bind", "health", "errors", "cache", "kubernetes", "loop", "forward"}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
