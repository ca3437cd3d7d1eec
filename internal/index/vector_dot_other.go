//go:build !amd64

package index

// dots sets out[j] = dot(q, vecs[j*d:(j+1)*d]) for every row of vecs.
func dots(q, vecs []float32, out []float32) { dotsGeneric(q, vecs, out) }
