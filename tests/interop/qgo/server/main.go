// quic-go 0.29's own interop-runner server (interop/server/main.go from Debian's golang-github-lucas-clemente-quic-go-dev),
// adapted to run outside Docker: address and paths come from the environment instead of :443, /www and /certs.
// Environment: TESTCASE, BIND (host:port), WWW, CERTS (with cert.pem and priv.key), SSLKEYLOGFILE, QLOGDIR.
package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/lucas-clemente/quic-go"
	"github.com/lucas-clemente/quic-go/http3"
	"github.com/lucas-clemente/quic-go/interop/http09"
	"github.com/lucas-clemente/quic-go/interop/utils"
	"github.com/lucas-clemente/quic-go/qlog"
)

var tlsConf *tls.Config

func main() {
	keyLog, err := utils.GetSSLKeyLog()
	if err != nil {
		fmt.Printf("Could not create key log: %s\n", err.Error())
		os.Exit(1)
	}
	if keyLog != nil {
		defer keyLog.Close()
	}

	testcase := os.Getenv("TESTCASE")
	bind := os.Getenv("BIND")
	www := os.Getenv("WWW")
	certs := os.Getenv("CERTS")

	getLogWriter, err := utils.GetQLOGWriter()
	if err != nil {
		fmt.Println(err.Error())
		os.Exit(1)
	}
	quicConf := &quic.Config{
		RequireAddressValidation: func(net.Addr) bool { return testcase == "retry" },
	}
	if getLogWriter != nil {
		quicConf.Tracer = qlog.NewTracer(getLogWriter)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(certs, "cert.pem"), filepath.Join(certs, "priv.key"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	tlsConf = &tls.Config{
		Certificates: []tls.Certificate{cert},
		KeyLogWriter: keyLog,
	}
	http.DefaultServeMux.Handle("/", http.FileServer(http.Dir(www)))

	switch testcase {
	case "handshake", "retry", "transfer", "resumption", "zerortt", "multiconnect", "keyupdate":
		err = runHTTP09Server(bind, quicConf)
	case "chacha20":
		tlsConf.CipherSuites = []uint16{tls.TLS_CHACHA20_POLY1305_SHA256}
		err = runHTTP09Server(bind, quicConf)
	case "http3":
		err = runHTTP3Server(bind, quicConf)
	default:
		fmt.Printf("unsupported test case: %s\n", testcase)
		os.Exit(127)
	}

	if err != nil {
		fmt.Printf("Error running server: %s\n", err.Error())
		os.Exit(1)
	}
}

func runHTTP09Server(bind string, quicConf *quic.Config) error {
	server := http09.Server{
		Server: &http.Server{
			Addr:      bind,
			TLSConfig: tlsConf,
		},
		QuicConfig: quicConf,
	}
	return server.ListenAndServe()
}

func runHTTP3Server(bind string, quicConf *quic.Config) error {
	server := http3.Server{
		Addr:       bind,
		TLSConfig:  tlsConf,
		QuicConfig: quicConf,
	}
	return server.ListenAndServe()
}
