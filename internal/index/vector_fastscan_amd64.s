// The fast-scan kernel (see vector_fastscan.go): per block of 32 vectors,
// 16-bit sums of byte-shuffle lookups, then each vector's bound in float32
// compared with the threshold, as fastScanGeneric does, operation for
// operation.
//
// The loop takes two code bytes per vector (two 32-byte rows) a pass into
// two sets of sums, so that their additions do not wait on each other, and
// asks for the codes 1 KB ahead: the hardware prefetcher alone left about 2
// ns per vector of memory stalls at 1M vectors. The odd bytes of the
// lookups are taken by VPMADDUBSW with 0x0100 words (a multiply, which runs
// beside the shuffles) rather than by shifts (which compete with them).
// Constants are set with VEX instructions only: a legacy-SSE MOVD inside the
// loop made it four times slower.

#include "textflag.h"

// BOUND turns eight 16-bit sums in xsum into the bounds of eight vectors
// whose factors are at off(DI) (scales) and off+128(DI) (error bounds),
// stores the bounds at off(R13) and ors their mask bits into R12 at bit
// shift. Y10–Y13 hold delta, offset, eps and the threshold.
#define BOUND(xsum, off, shift) \
	VPMOVZXWD    xsum, Y6; \
	VCVTDQ2PS    Y6, Y6; \
	VMULPS       Y10, Y6, Y6; \
	VADDPS       Y13, Y6, Y6; \
	VMULPS       off(DI), Y6, Y6; \
	VMULPS       off+128(DI), Y12, Y7; \
	VADDPS       Y7, Y6, Y6; \
	VMOVUPS      Y6, off(R13); \
	VCMPPS       $0x1e, Y11, Y6, Y6; \
	VMOVMSKPS    Y6, AX; \
	SHLL         $shift, AX; \
	ORL          AX, R12

// BLOCK_END turns a block's sums (Y0: Σ even + 256·odd, Y1: Σ odd) into
// its 32 bounds at (R13) and mask at (DX), from the constants at (R9), and
// moves DX, DI and R13 on to the next block.
#define BLOCK_END \
	VPSLLW       $8, Y1, Y2; \
	VPSUBW       Y2, Y0, Y0; \
	VBROADCASTSS 0(R9), Y10; \
	VBROADCASTSS 4(R9), Y13; \
	VBROADCASTSS 8(R9), Y12; \
	VBROADCASTSS 12(R9), Y11; \
	XORL         R12, R12; \
	BOUND(X0, 0, 0); \
	VEXTRACTI128 $1, Y0, X0; \
	BOUND(X0, 32, 8); \
	BOUND(X1, 64, 16); \
	VEXTRACTI128 $1, Y1, X1; \
	BOUND(X1, 96, 24); \
	MOVL         R12, (DX); \
	ADDQ         $4, DX; \
	ADDQ         $256, DI; \
	ADDQ         $128, R13

// NIBBLES adds the lookups of the code row in codes, from the tables at
// lo(R10) (low half bytes) and hi(R10) (high ones), read by load, to the sums
// acc (Σ even + 256·odd, modulo 2¹⁶) and odd (Σ odd), using t0–t3 as
// scratch; and is the width's AND, mask the low half-byte mask and sel
// VPMADDUBSW's odd-byte selector.
#define NIBBLES(and, load, mask, sel, codes, lo, hi, acc, odd, t0, t1, t2, t3) \
	VPSRLW     $4, codes, t1; \
	and        mask, codes, t0; \
	and        mask, t1, t1; \
	load       lo(R10), t2; \
	load       hi(R10), t3; \
	VPSHUFB    t0, t2, t2; \
	VPSHUFB    t1, t3, t3; \
	VPADDW     t2, acc, acc; \
	VPADDW     t3, acc, acc; \
	VPMADDUBSW sel, t2, t2; \
	VPMADDUBSW sel, t3, t3; \
	VPADDW     t2, odd, odd; \
	VPADDW     t3, odd, odd

// LOOKUP is NIBBLES for one code row in ymm, from the tables at off(R10)
// (quantizeTable's: 16 bytes of each half byte's, broadcast to both lanes).
#define LOOKUP(codes, off, acc, odd, t0, t1, t2, t3) \
	NIBBLES(VPAND, VBROADCASTI128, Y15, Y14, codes, off, off+16, acc, odd, t0, t1, t2, t3)

// func fastScanAVX2(codes *byte, factors *float32, blocks int, pairs int, lut *byte, c *scanConsts, masks *uint32, vals *float32)
TEXT ·fastScanAVX2(SB), NOSPLIT, $0-64
	MOVQ codes+0(FP), SI
	MOVQ factors+8(FP), DI
	MOVQ blocks+16(FP), BX
	MOVQ pairs+24(FP), CX
	MOVQ lut+32(FP), R8
	MOVQ c+40(FP), R9
	MOVQ masks+48(FP), DX
	MOVQ vals+56(FP), R13

	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15 // low half-byte mask
	MOVL         $0x01000100, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14 // VPMADDUBSW's odd-byte selector

block:
	TESTQ BX, BX
	JZ    done
	VPXOR Y0, Y0, Y0 // first row of each two: Σ (even + 256·odd)
	VPXOR Y1, Y1, Y1 // and Σ odd
	VPXOR Y8, Y8, Y8 // second row: the same
	VPXOR Y9, Y9, Y9
	MOVQ  R8, R10
	MOVQ  CX, R11
	SHRQ  $1, R11
	JZ    last

two:
	PREFETCHT0 1024(SI)
	VMOVDQU    (SI), Y2
	VMOVDQU    32(SI), Y6
	LOOKUP(Y2, 0, Y0, Y1, Y2, Y3, Y4, Y5)
	LOOKUP(Y6, 32, Y8, Y9, Y6, Y7, Y10, Y11)
	ADDQ       $64, SI
	ADDQ       $64, R10
	DECQ       R11
	JNZ        two

last:
	TESTQ   $1, CX
	JZ      sum
	VMOVDQU (SI), Y2
	LOOKUP(Y2, 0, Y0, Y1, Y2, Y3, Y4, Y5)
	ADDQ    $32, SI

sum:
	VPADDW       Y8, Y0, Y0
	VPADDW       Y9, Y1, Y1
	BLOCK_END
	DECQ         BX
	JMP          block

done:
	VZEROUPPER
	RET

// LOOKUP512 is LOOKUP for two code rows (64 bytes, the same 32 vectors'
// bytes p and p+1) in zmm codes, from the wide tables at off(R10) (see
// wideTable): the sums of row p+1 land in the upper 256 bits, which the
// block's end adds to the lower ones (16-bit additions in any order give the
// same sums modulo 2¹⁶, hence the same masks). The AVX-512 kernel asks for
// no codes ahead: on the Zen 4 it was measured on (BenchmarkFastScanResident
// at 1M vectors), prefetching 256 to 4096 bytes ahead made it 5–45% slower
// than the hardware prefetcher alone.
#define LOOKUP512(codes, off, acc, odd, t0, t1, t2, t3) \
	NIBBLES(VPANDQ, VMOVDQU64, Z15, Z14, codes, off, off+64, acc, odd, t0, t1, t2, t3)

// LOOKUPW is LOOKUP for one row in ymm, from the wide tables at off(R10).
#define LOOKUPW(codes, off, acc, odd, t0, t1, t2, t3) \
	NIBBLES(VPAND, VMOVDQU, Y15, Y14, codes, off, off+64, acc, odd, t0, t1, t2, t3)

// func fastScanAVX512(codes *byte, factors *float32, blocks int, pairs int, wide *byte, c *scanConsts, masks *uint32, vals *float32)
TEXT ·fastScanAVX512(SB), NOSPLIT, $0-64
	MOVQ codes+0(FP), SI
	MOVQ factors+8(FP), DI
	MOVQ blocks+16(FP), BX
	MOVQ pairs+24(FP), CX
	MOVQ wide+32(FP), R8
	MOVQ c+40(FP), R9
	MOVQ masks+48(FP), DX
	MOVQ vals+56(FP), R13

	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15 // low half-byte mask
	MOVL         $0x01000100, AX
	VPBROADCASTD AX, Z14 // VPMADDUBSW's odd-byte selector

block512:
	TESTQ  BX, BX
	JZ     done512
	VPXORQ Z0, Z0, Z0 // rows 4i, 4i+1: Σ (even + 256·odd)
	VPXORQ Z1, Z1, Z1 // and Σ odd
	VPXORQ Z8, Z8, Z8 // rows 4i+2, 4i+3: the same
	VPXORQ Z9, Z9, Z9
	MOVQ   R8, R10
	MOVQ   CX, R11
	SHRQ   $2, R11
	JZ     two512

four512:
	VMOVDQU64  (SI), Z2
	VMOVDQU64  64(SI), Z6
	LOOKUP512(Z2, 0, Z0, Z1, Z2, Z3, Z4, Z5)
	LOOKUP512(Z6, 128, Z8, Z9, Z6, Z7, Z16, Z17)
	ADDQ       $128, SI
	ADDQ       $256, R10
	DECQ       R11
	JNZ        four512

two512:
	TESTQ     $2, CX
	JZ        fold512
	VMOVDQU64 (SI), Z2
	LOOKUP512(Z2, 0, Z0, Z1, Z2, Z3, Z4, Z5)
	ADDQ      $64, SI
	ADDQ      $128, R10

fold512:
	// Rows p+1's sums onto rows p's, then the upper 256 bits onto the
	// lower: VEX instructions below clear the upper bits.
	VPADDW        Z8, Z0, Z0
	VPADDW        Z9, Z1, Z1
	VEXTRACTI64X4 $1, Z0, Y2
	VEXTRACTI64X4 $1, Z1, Y3
	VPADDW        Y2, Y0, Y0
	VPADDW        Y3, Y1, Y1
	TESTQ         $1, CX
	JZ            sum512
	VMOVDQU       (SI), Y2
	LOOKUPW(Y2, 0, Y0, Y1, Y2, Y3, Y4, Y5)
	ADDQ          $32, SI

sum512:
	BLOCK_END
	DECQ         BX
	JMP          block512

done512:
	VZEROUPPER
	RET
