// The exact scan's inner products, four rows at a time (see dots in
// vector_dot_amd64.go): each row keeps four partial sums in one register,
// lane j summing the products of components i+j, and adds them as
// ((s0+s1)+s2)+s3 at the end, exactly as dot does in scalar code, so the
// scores are the same bits.

#include "textflag.h"

// HSUM stores ((acc[0]+acc[1])+acc[2])+acc[3] at off(DX): the order in
// which dot adds its four partial sums.
#define HSUM(acc, off) \
	MOVAPS acc, X9; \
	MOVAPS acc, X10; \
	SHUFPS $0x55, X10, X10; \
	ADDSS  X10, X9; \
	MOVAPS acc, X10; \
	SHUFPS $0xAA, X10, X10; \
	ADDSS  X10, X9; \
	MOVAPS acc, X10; \
	SHUFPS $0xFF, X10, X10; \
	ADDSS  X10, X9; \
	MOVSS  X9, off(DX)

// func dotsSSE(q *float32, vecs *float32, d int, n int, out *float32)
TEXT ·dotsSSE(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ vecs+8(FP), DI
	MOVQ d+16(FP), CX
	MOVQ n+24(FP), BX
	MOVQ out+32(FP), DX
	MOVQ CX, R8
	SHLQ $2, R8 // a row's bytes

four:
	CMPQ BX, $4
	JLT  one
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORQ  AX, AX

loop4:
	MOVUPS (SI)(AX*4), X4
	MOVUPS (DI)(AX*4), X5
	MULPS  X4, X5
	ADDPS  X5, X0
	MOVUPS (R9)(AX*4), X6
	MULPS  X4, X6
	ADDPS  X6, X1
	MOVUPS (R10)(AX*4), X7
	MULPS  X4, X7
	ADDPS  X7, X2
	MOVUPS (R11)(AX*4), X8
	MULPS  X4, X8
	ADDPS  X8, X3
	ADDQ   $4, AX
	CMPQ   AX, CX
	JLT    loop4
	HSUM(X0, 0)
	HSUM(X1, 4)
	HSUM(X2, 8)
	HSUM(X3, 12)
	LEAQ (R11)(R8*1), DI
	ADDQ $16, DX
	SUBQ $4, BX
	JMP  four

one:
	CMPQ BX, $0
	JEQ  done
	XORPS X0, X0
	XORQ  AX, AX

loop1:
	MOVUPS (SI)(AX*4), X4
	MOVUPS (DI)(AX*4), X5
	MULPS  X4, X5
	ADDPS  X5, X0
	ADDQ   $4, AX
	CMPQ   AX, CX
	JLT    loop1
	HSUM(X0, 0)
	ADDQ R8, DI
	ADDQ $4, DX
	DECQ BX
	JMP  one

done:
	RET
