#include <gtest/gtest.h>
TEST(PsiProof, Placeholder) {}
