package index

// dotsSSE sets out[j] to the inner product of q (d floats) with row j of
// vecs (n rows of d floats), for d a positive multiple of 4. Its sums are
// dot's, in dot's order: same bits.
//
//go:noescape
func dotsSSE(q *float32, vecs *float32, d int, n int, out *float32)

// dots sets out[j] = dot(q, vecs[j*d:(j+1)*d]) for every row of vecs. Four
// rows share each load of the query and keep four independent sums in
// flight, where dot waits on one row's additions.
func dots(q, vecs []float32, out []float32) {
	d := len(q)
	n := len(out)
	if d == 0 || d%4 != 0 || n == 0 {
		dotsGeneric(q, vecs, out)
		return
	}
	_ = vecs[n*d-1] // the rows are there
	dotsSSE(&q[0], &vecs[0], d, n, &out[0])
}
