// gohash.go - a Go program for tests/symbols/test-go.sh: most of its time
// in crypto/sha256's assembly (crypto/sha256.block.abi0 in the symbol
// table, crypto/sha256.block in DWARF), the rest in map updates that
// inline runtime helpers. Usage: gohash SECONDS
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	buf := make([]byte, 64<<10)
	seen := map[string]int{}
	var sum [32]byte
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for i := 0; time.Now().Before(end); i++ {
		sum = sha256.Sum256(buf)
		buf[i%len(buf)] = sum[0]
		seen[strconv.Itoa(i%4096)]++
	}
	fmt.Println(len(seen), sum[0])
}
