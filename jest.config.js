// Tests are written in TypeScript beside the code and compiled by `tsc -b`;
// jest runs the compiled ES modules (npm test passes --experimental-vm-modules).
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/dist/**/*.test.js'],
  transform: {},
  testTimeout: 60000,
  maxWorkers: 2,
};
