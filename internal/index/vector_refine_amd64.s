// The second stage's kernel (see vector_refine.go): 16 codes at a time,
// sign-extended to 16 bits and multiplied by the query's 16-bit integers in
// pairs (VPMADDWD), their 32-bit sums added lane by lane. The sums cannot
// overflow (the query's bounds), so the order of additions does not change
// the result: it is refineDotGeneric's.

#include "textflag.h"

// func refineDotAVX2(q *int16, c *int8, n int) int32
TEXT ·refineDotAVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  AX, AX
	TESTQ $16, CX
	JZ    pairs

	// An odd number of 16s: one first, then two at a time.
	VPMOVSXBW (DI), Y2
	VPMADDWD  (SI), Y2, Y2
	VPADDD    Y2, Y0, Y0
	MOVQ      $16, AX
	CMPQ      AX, CX
	JGE       sum

pairs:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD  (SI)(AX*2), Y2, Y2
	VPMADDWD  32(SI)(AX*2), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, AX
	CMPQ      AX, CX
	JLT       pairs

sum:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	MOVL         AX, ret+24(FP)
	VZEROUPPER
	RET
