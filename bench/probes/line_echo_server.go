// The Go twin of LineEchoProbe's and JdkLineEcho's server, not part of the build: a goroutine per
// connection reads lines with a bufio.Reader and writes each back with a bufio.Writer and Flush.
// It prints its port; point LineEchoProbe's clients at it with -Dserver.port (see
// LineEchoProbe.java), or give its binary to the JMH benchmark JdkLineEcho with -Dbench.goecho
// (impl=go: bench/README.md, "The JDK's sockets").
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func(c net.Conn) {
			defer c.Close()
			r := bufio.NewReader(c)
			w := bufio.NewWriter(c)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				w.WriteString(line)
				w.Flush()
			}
		}(c)
	}
}
