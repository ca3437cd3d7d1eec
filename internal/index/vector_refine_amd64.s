// The second stage's kernel (see vector_refine.go): for each slot, its
// codes 16 at a time, sign-extended to 16 bits and multiplied by the
// query's 16-bit integers in pairs (VPMADDWD), the 32-bit sums added lane
// by lane. The sums cannot overflow (the query's bounds), so the order of
// additions does not change the result: it is refineDotsGeneric's. The
// slots are scattered over the codes, each a few cache lines read once:
// while one slot is summed, the codes of the slot refineAhead further on
// are prefetched, so that the memory's latency overlaps the arithmetic.

#include "textflag.h"

#define refineAhead 8

// PREFETCH_SLOT asks, with the prefetch instruction hint, for the factors
// (at R14+8·slot) and every cache line of the codes (stride CX at
// R8+slot·stride) of the slot at index idx of the slots (R9); loop names
// the label of its line loop. It clobbers R12 and R13.
#define PREFETCH_SLOT(hint, idx, loop) \
	MOVLQSX (R9)(idx*4), R12; \
	hint    (R14)(R12*8); \
	IMULQ   CX, R12; \
	ADDQ    R8, R12; \
	XORQ    R13, R13; \
loop: \
	hint    (R12)(R13*1); \
	ADDQ    $64, R13; \
	CMPQ    R13, CX; \
	JLT     loop; \
	hint    -1(R12)(CX*1)

// func refineDotsAVX2(q *int16, codes *int8, stride int, slots *int32, n int, out *int32, fac *float32)
TEXT ·refineDotsAVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), R8
	MOVQ stride+16(FP), CX
	MOVQ slots+24(FP), R9
	MOVQ n+32(FP), BX
	MOVQ out+40(FP), DX
	MOVQ fac+48(FP), R14
	XORQ R10, R10 // slot index

	// Prefetch the first refineAhead slots' codes.
	XORQ R11, R11

warm:
	CMPQ R11, BX
	JGE  slot
	CMPQ R11, $refineAhead
	JGE  slot
	PREFETCH_SLOT(PREFETCHT0, R11, warmline)
	INCQ R11
	JMP  warm

slot:
	CMPQ R10, BX
	JGE  done

	// Prefetch slot R10+refineAhead.
	LEAQ refineAhead(R10), R11
	CMPQ R11, BX
	JGE  sum
	PREFETCH_SLOT(PREFETCHT0, R11, line)

sum:
	MOVLQSX (R9)(R10*4), DI
	IMULQ   CX, DI
	ADDQ    R8, DI // this slot's codes
	VPXOR   Y0, Y0, Y0
	VPXOR   Y1, Y1, Y1
	XORQ    AX, AX
	TESTQ   $16, CX
	JZ      pairs

	// An odd number of 16s: one first, then two at a time.
	VPMOVSXBW (DI), Y2
	VPMADDWD  (SI), Y2, Y2
	VPADDD    Y2, Y0, Y0
	MOVQ      $16, AX
	CMPQ      AX, CX
	JGE       hsum

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

hsum:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	MOVL         AX, (DX)(R10*4)
	INCQ         R10
	JMP          slot

done:
	VZEROUPPER
	RET

// prefetchRefineSlots asks for the slots' codes and factors into L2
// (PREFETCHT2): a scan chunk's candidates are tens of lines at once, and
// into L1 they would wait on its few miss buffers and push out the scan's
// codes; refineDots's own prefetches bring them on to L1 when it reaches
// them. On 1M uniform vectors, T0 here was 5.9–6.1 ms a query, T2 4.6–4.7
// (BenchmarkVectorSearch, one binary each, alternated).
//
// func prefetchRefineSlots(codes *int8, stride int, slots *int32, n int, fac *float32)
TEXT ·prefetchRefineSlots(SB), NOSPLIT, $0-40
	MOVQ codes+0(FP), R8
	MOVQ stride+8(FP), CX
	MOVQ slots+16(FP), R9
	MOVQ n+24(FP), BX
	MOVQ fac+32(FP), R14
	XORQ R11, R11

pslot:
	CMPQ R11, BX
	JGE  pdone
	PREFETCH_SLOT(PREFETCHT2, R11, pline)
	INCQ R11
	JMP  pslot

pdone:
	RET
